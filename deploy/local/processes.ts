import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SUPERVISE = join(dirname(fileURLToPath(import.meta.url)), 'supervise.sh');

export interface ManagedProcessOptions {
  env?: NodeJS.ProcessEnv;
  /** What stops the server cleanly (postgres: SIGINT for a fast shutdown); default SIGTERM. */
  stopSignal?: NodeJS.Signals;
  /** How long a clean stop may take before the server is killed. */
  graceMs?: number;
}

/**
 * A server the stack started, through supervise.sh: in a process group of its own, so a Ctrl-C
 * or a SIGTERM sent to `svc start`'s group reaches svc only and svc stops its services before
 * their servers; and stopped by the wrapper when this process dies, whatever kills it.
 */
export class ManagedProcess {
  readonly name: string;
  readonly logFile: string;
  private child: ChildProcess | undefined;
  private exited: Promise<number | null> | undefined;
  private readonly command: string;
  private readonly args: readonly string[];
  private readonly options: ManagedProcessOptions;

  constructor(name: string, command: string, args: readonly string[], logFile: string, options: ManagedProcessOptions = {}) {
    this.name = name;
    this.command = command;
    this.args = args;
    this.logFile = logFile;
    this.options = options;
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
    const graceSeconds = String(Math.ceil((this.options.graceMs ?? 20_000) / 1000));
    const child = spawn('bash', [SUPERVISE, this.options.stopSignal ?? 'SIGTERM', graceSeconds, this.command, ...this.args], {
      stdio: ['pipe', fd, fd],
      env: this.options.env ?? process.env,
      detached: true,
    });
    closeSync(fd);
    // The pipe is the wrapper's lifeline (end-of-file: we died), nothing is written to it.
    child.stdin?.on('error', () => undefined);
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    liveChildren.add(child);
    child.once('exit', () => {
      liveChildren.delete(child);
      child.stdin?.destroy();
    });
  }

  /** Rejects as soon as the process dies, so a readiness wait fails fast with the reason. */
  diedEarly(): Promise<never> {
    return (this.exited ?? new Promise<never>(() => undefined)).then((code) => {
      throw new Error(`${this.name} exited with code ${code} before it was ready; last lines of ${this.logFile}:\n${this.tail()}`);
    });
  }

  /** Asks the wrapper to stop the server (it kills it after the grace); the whole group is killed if even that hangs. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => killGroup(child, 'SIGKILL'), (this.options.graceMs ?? 20_000) + 5000);
    await this.exited;
    clearTimeout(timer);
  }

  /** Kills the server at once, as a crash would (the fault suite's kill -9). */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    killGroup(child, 'SIGKILL');
    await this.exited;
  }

  tail(lines = 30): string {
    if (!existsSync(this.logFile)) return '(no log)';
    return readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

const liveChildren = new Set<ChildProcess>();
const killAll = () => {
  for (const child of liveChildren) killGroup(child, 'SIGKILL');
};
// If the parent exits without stopping the stack (a crash, process.exit), take the servers with it.
process.once('exit', killAll);
// A signal's default action skips 'exit' handlers: when nobody else handles it (the CLI does, to
// stop gracefully), stop the servers and exit as the signal would have.
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
] as const) {
  process.on(signal, () => {
    if (process.listenerCount(signal) > 1) return;
    killAll();
    process.exit(code);
  });
}

/** Ports this process has handed out, so two calls never answer the same one before either is bound. */
const handedOut = new Set<number>();

/**
 * Ports freePort must never answer: ones another process already chose and has not bound yet. `svc
 * start --stack-ports auto` picks the stack's ports while the services' ports in its environment are
 * still unbound, and a stack server once took a service's port first (EADDRINUSE in a CI run).
 */
export function keepOut(ports: Iterable<number>): void {
  for (const port of ports) handedOut.add(port);
}

/** Where the kernel picks the local ports of outgoing connections (Linux; elsewhere a bound below it). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 1024 ? low : 32768;
  } catch {
    return 32768;
  }
}

/**
 * A port free now, for a server the caller starts next. Chosen below the ephemeral range: a port
 * listen(0) picks comes from that range, and between this answer and the caller's listen any
 * outgoing connection on the machine (a Kafka or MongoDB client) may take it as its local port,
 * which once failed a CI run with EADDRINUSE.
 */
export async function freePort(): Promise<number> {
  const min = 15000;
  const max = Math.min(ephemeralLow(), 65536) - 1;
  for (let attempt = 0; max - min > 1000 && attempt < 50; attempt++) {
    const port = min + Math.floor(Math.random() * (max - min + 1));
    if (handedOut.has(port) || !(await portIsFree(port))) continue;
    handedOut.add(port);
    return port;
  }
  return anyPort();
}

function anyPort(): Promise<number> {
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
