import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitUntil } from '../../deploy/local/processes.ts';

/**
 * One `svc run <service>` process, as production runs them: started, stopped with SIGTERM (and
 * waited on), or killed with SIGKILL as a crash would. Ready when its /health answers 200: its
 * dependencies answer and its consumer groups have joined.
 */
export class ServiceProcess {
  readonly name: string;
  readonly healthUrl: string;
  readonly #env: NodeJS.ProcessEnv;
  readonly #logFile: string;
  #child: ChildProcess | undefined;
  #exited: Promise<string> | undefined;
  starts = 0;
  /** When each SIGKILL was sent (epoch ms): the audit places e-mails re-sent after a kill against these. */
  readonly killedAt: number[] = [];
  /** Each SIGKILL with the pid it killed: the audit matches it with the effect owners the claims were taken from. */
  readonly kills: { atMs: number; pid: number }[] = [];

  /** `label` names the log file (default `name`): replicas of one service each have their own. */
  constructor(name: string, env: NodeJS.ProcessEnv, healthPort: number, logDir: string, label = name) {
    this.name = name;
    this.#env = env;
    this.healthUrl = `http://127.0.0.1:${healthPort}/health`;
    this.#logFile = join(logDir, `${label}.log`);
  }

  get running(): boolean {
    return this.#child !== undefined && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  async start(timeoutMs = 120_000): Promise<void> {
    const fd = openSync(this.#logFile, 'a');
    const child = spawn(process.execPath, ['--disable-warning=TimeoutNegativeWarning', 'app/cli/svc.ts', 'run', ...this.name.split(' ')], {
      env: this.#env,
      stdio: ['ignore', fd, fd],
    });
    closeSync(fd);
    this.#child = child;
    this.#exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? `code ${code}`)));
    this.starts++;
    const died = this.#exited.then((how) => {
      throw new Error(`${this.name} exited (${how}) before it was ready; the end of ${this.#logFile}:\n${this.logTail(20)}`);
    });
    await waitUntil(
      `${this.name} ready`,
      async () => {
        const res = await fetch(this.healthUrl, { signal: AbortSignal.timeout(2000) });
        if (res.status !== 200) throw new Error(`${this.name} /health answered ${res.status}`);
      },
      timeoutMs,
      died,
    );
  }

  /** The last lines of this process's log (every start appends to it). */
  logTail(lines: number): string {
    try {
      return readFileSync(this.#logFile, 'utf8')
        .trimEnd()
        .split('\n')
        .slice(-lines)
        .map((l) => `    ${l.slice(0, 400)}`)
        .join('\n');
    } catch (err) {
      return `    (no log: ${(err as Error).message})`;
    }
  }

  /** A clean stop: SIGTERM, then the process's own grace; killed if it outlives twice that. */
  async stop(graceMs = 15_000): Promise<number> {
    const child = this.#child;
    if (!child || !this.running) return 0;
    const at = Date.now();
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await this.#exited;
    clearTimeout(timer);
    return Date.now() - at;
  }

  /** kill -9: no shutdown of any kind. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (!child || !this.running) return;
    const atMs = Date.now();
    this.killedAt.push(atMs);
    if (child.pid !== undefined) this.kills.push({ atMs, pid: child.pid });
    child.kill('SIGKILL');
    await this.#exited;
  }
}
