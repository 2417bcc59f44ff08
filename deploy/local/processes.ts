import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';

/** A server the stack started: its log file, and a clean stop (TERM, then KILL after a grace). */
export class ManagedProcess {
  readonly name: string;
  readonly logFile: string;
  private child: ChildProcess | undefined;
  private exited: Promise<number | null> | undefined;
  private readonly command: string;
  private readonly args: readonly string[];
  private readonly env: NodeJS.ProcessEnv;

  constructor(name: string, command: string, args: readonly string[], logFile: string, env: NodeJS.ProcessEnv = process.env) {
    this.name = name;
    this.command = command;
    this.args = args;
    this.logFile = logFile;
    this.env = env;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): void {
    if (this.running) return;
    const fd = openSync(this.logFile, 'a');
    const child = spawn(this.command, [...this.args], { stdio: ['ignore', fd, fd], env: this.env });
    closeSync(fd);
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    liveChildren.add(child);
    child.once('exit', () => liveChildren.delete(child));
  }

  /** Rejects as soon as the process dies, so a readiness wait fails fast with the reason. */
  diedEarly(): Promise<never> {
    return (this.exited ?? new Promise<never>(() => undefined)).then((code) => {
      throw new Error(`${this.name} exited with code ${code} before it was ready; last lines of ${this.logFile}:\n${this.tail()}`);
    });
  }

  async stop(graceMs = 20_000): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  tail(lines = 30): string {
    if (!existsSync(this.logFile)) return '(no log)';
    return readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  }
}

const liveChildren = new Set<ChildProcess>();
const killAll = () => {
  for (const child of liveChildren) child.kill('SIGKILL');
};
// If the parent exits without stopping the stack (a crash, process.exit), take the servers with it.
process.once('exit', killAll);
// A signal's default action skips 'exit' handlers: when nobody else handles it (the CLI does, to
// stop gracefully), stop the servers and exit as the signal would have.
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]] as const) {
  process.on(signal, () => {
    if (process.listenerCount(signal) > 1) return;
    killAll();
    process.exit(code);
  });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * Polls a readiness probe until it passes or the deadline expires. The probe does the real thing
 * (a round trip, a ping, a greeting); the short pause between attempts only paces the polling.
 */
export async function waitUntil(what: string, probe: () => Promise<void>, timeoutMs: number, abort?: Promise<never>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  let delay = 100;
  for (;;) {
    try {
      await (abort ? Promise.race([probe(), abort]) : probe());
      return;
    } catch (err) {
      lastError = err;
      if (abort && (err as Error).message.includes('before it was ready')) throw err;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what} was not ready within ${timeoutMs / 1000}s: ${(lastError as Error)?.message ?? lastError}`);
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 1000);
  }
}
