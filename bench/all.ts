/**
 * Every hot-path benchmark of issue 16, one after the other, each in its own child process
 * (`node bench/<name>.ts`, exactly as its own npm script runs it), then ONE table of every figure
 * they reported (bench/figures.ts: ours, baseline, ratio, target, MET/MISSED).
 *
 *   npm run bench
 *   BENCH_SECONDS=3 npm run bench              # env passes through to every benchmark
 *   npm run bench -- replay events-throughput  # only these, in this order
 *
 * Env:
 *   KAFKA_BROKERS, MONGODB_URI, SMTP_URL (+ MAILPIT_URL)  use these servers; otherwise one throwaway
 *                      Kafka, FerretDB and Mailpit are started here under .data/bench-*, shared by
 *                      every benchmark (passed to them in those variables) and removed at the end:
 *                      one start-up instead of one per benchmark
 *   BENCH_SHARED_STACK 0: start nothing here; each benchmark starts its own servers as when run alone
 *   anything else      passed to every benchmark (BENCH_EVENTS, BENCH_SECONDS, BENCH_ROUNDS, ...);
 *                      note that a knob of the same name means something per benchmark
 *
 * Each benchmark's stdout and stderr pass through as they come. A benchmark that exits non-zero is
 * reported in the table and makes this exit 1, after the others ran; a missed target is not a
 * failure (exit 0). A benchmark file that does not exist is skipped with a line saying so.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStack, type Stack, type StackEnv } from '../deploy/local/stack.ts';
import { parseFigures } from './figures.ts';
import { BENCH_NODE_FLAGS } from './node-flags.ts';
import { runMain } from './run-main.ts';
import { formatSummary, type BenchOutcome } from './summary.ts';

/** In the order they run. */
export const BENCHMARKS = ['validate', 'key-check', 'events-throughput', 'webhook-to-key', 'replay'] as const;

const HERE = fileURLToPath(new URL('.', import.meta.url));
const err = (line: string) => process.stderr.write(`[bench:all] ${line}\n`);

let child: ChildProcess | undefined;
let stopStack: (() => Promise<void>) | undefined;
/** Set by SIGINT/SIGTERM: no further benchmark starts, and no summary is printed. */
let stopping = false;

/** Runs one benchmark as a child, its output passed through; stdout is also kept for its figures. */
function runBench(name: string, env: NodeJS.ProcessEnv): Promise<BenchOutcome> {
  const file = join(HERE, `${name}.ts`);
  if (!existsSync(file)) {
    err(`skipping ${name}: bench/${name}.ts does not exist`);
    return Promise.resolve({ name, status: 'skipped', reason: `bench/${name}.ts does not exist`, reports: [] });
  }
  err(`running bench/${name}.ts`);
  const started = performance.now();
  return new Promise((resolvePromise) => {
    const proc = spawn(process.execPath, [...BENCH_NODE_FLAGS, file], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    child = proc;
    let stdout = '';
    proc.stdout!.setEncoding('utf8');
    proc.stdout!.on('data', (chunk: string) => {
      stdout += chunk;
      process.stdout.write(chunk);
    });
    const finish = (status: BenchOutcome['status'], reason?: string) => {
      child = undefined;
      const seconds = (performance.now() - started) / 1000;
      let reports: BenchOutcome['reports'] = [];
      try {
        reports = parseFigures(stdout);
      } catch (e) {
        status = 'failed';
        reason = `unreadable BENCH_FIGURES line: ${(e as Error).message}`;
      }
      err(`${name}: ${status === 'ok' ? 'done' : `FAILED (${reason})`} in ${seconds.toFixed(0)} s`);
      resolvePromise({ name, status, ...(reason ? { reason } : {}), reports, seconds });
    };
    proc.on('error', (e) => finish('failed', `could not start: ${e.message}`));
    proc.on('close', (code, signal) => {
      if (code === 0) finish('ok');
      else finish('failed', signal ? `killed by ${signal}` : `exit code ${code}`);
    });
  });
}

/** One Kafka, FerretDB and Mailpit for every benchmark, unless the environment names servers. */
async function sharedStack(): Promise<{ env: Partial<StackEnv>; started: boolean; stop: () => Promise<void> }> {
  const given: Partial<StackEnv> = {
    ...(process.env.KAFKA_BROKERS ? { KAFKA_BROKERS: process.env.KAFKA_BROKERS } : {}),
    ...(process.env.MONGODB_URI ? { MONGODB_URI: process.env.MONGODB_URI } : {}),
    ...(process.env.SMTP_URL ? { SMTP_URL: process.env.SMTP_URL, MAILPIT_URL: process.env.MAILPIT_URL ?? '' } : {}),
    ...(process.env.SCHEMA_REGISTRY_URL ? { SCHEMA_REGISTRY_URL: process.env.SCHEMA_REGISTRY_URL } : {}),
  };
  if (process.env.BENCH_SHARED_STACK === '0' || (given.KAFKA_BROKERS && given.MONGODB_URI && given.SMTP_URL && given.SCHEMA_REGISTRY_URL)) {
    return { env: given, started: false, stop: async () => undefined };
  }
  const base = resolve('.data');
  mkdirSync(base, { recursive: true });
  const dataDir = mkdtempSync(join(base, 'bench-'));
  err(`starting a throwaway stack for every benchmark under ${dataDir}`);
  let stack: Stack | undefined;
  const stop = async () => {
    const s = stack;
    stack = undefined;
    await s?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    stack = await startStack({ dataDir, ports: 'auto', existing: given, progress: err });
  } catch (e) {
    rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  err(`stack: Kafka ${stack.env.KAFKA_BROKERS}, MongoDB ${stack.env.MONGODB_URI}, SMTP ${stack.env.SMTP_URL}`);
  return { env: stack.env, started: true, stop };
}

/** The benchmarks named on the command line (file names without .ts), else all of them. */
export function selected(args: readonly string[]): string[] {
  if (args.length === 0) return [...BENCHMARKS];
  const unknown = args.filter((a) => !(BENCHMARKS as readonly string[]).includes(a));
  if (unknown.length) throw new Error(`unknown benchmark(s) ${unknown.join(', ')}; known: ${BENCHMARKS.join(', ')}`);
  return [...args];
}

async function main(): Promise<void> {
  const names = selected(process.argv.slice(2));
  const onSignal = (signal: NodeJS.Signals) => {
    err(`${signal}: stopping`);
    stopping = true;
    // The child got the same signal from the terminal; make sure it goes, then stop the stack.
    const running = child;
    const waitChild = running && running.exitCode === null ? new Promise((r) => running.once('close', r)) : Promise.resolve();
    if (running?.pid !== undefined) running.kill('SIGINT');
    void waitChild.then(() => stopStack?.()).finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const outcomes: BenchOutcome[] = [];
  try {
    const stack = await sharedStack();
    stopStack = stack.stop;
    // bench:validate pins the stack beside its load generator for its run, as it does its own.
    const env = { ...process.env, ...stack.env, ...(stack.started ? { BENCH_STACK_ROOT: String(process.pid) } : {}) };
    for (const name of names) {
      if (stopping) break;
      outcomes.push(await runBench(name, env));
    }
  } finally {
    if (!stopping) {
      await stopStack?.();
      stopStack = undefined;
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  }
  // Interrupted: the signal handler stops the stack and exits 130.
  if (stopping) return new Promise<void>(() => undefined);
  process.stdout.write(`\n=== npm run bench: every figure, ours against its baseline in the same run ===\n\n${formatSummary(outcomes)}\n`);
  const failed = outcomes.filter((o) => o.status === 'failed');
  if (failed.length) {
    err(`FAILED: ${failed.map((o) => `bench/${o.name}.ts (${o.reason})`).join(', ')}; the others ran`);
    process.exitCode = 1;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await runMain(main, err);
