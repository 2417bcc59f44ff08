import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type PacedResult, type PacedSpec, wireRequests } from './paced-load.ts';

/**
 * The paced load of bench/paced-load.ts run by bench/pacer (Go): the same schedule, release rule and
 * result, from a process whose pauses are well under a millisecond. Node's generator stalled for
 * 4–53 ms per round on this machine, and every stall released its held-back requests at once.
 */
export interface GoPacedResult extends PacedResult {
  /** The most the pacer woke after a request was due (ms): the generator's own stall. */
  lateMaxMs: number;
  /** The pacer process's CPU (ms, user + system). */
  cpuMs: number;
  /** How long its threads were runnable but off a CPU (ms, schedstat run_delay); NaN if unknown. */
  waitMs: number;
}

const SOURCE_DIR = fileURLToPath(new URL('./pacer/', import.meta.url));
/** Every file the build reads: a change to any of them is a new binary. */
const sources = (): string[] =>
  readdirSync(SOURCE_DIR)
    .filter((f) => f === 'go.mod' || f.endsWith('.go'))
    .sort();

/**
 * The pacer's binary, built once per source version and cached outside the clone
 * (${SVC_CACHE_DIR:-~/.cache/svc}/bin/pacer-<hash>). Throws with the reason if Go cannot build it.
 */
export function pacerBinary(): string {
  const hash = createHash('sha256');
  for (const file of sources())
    hash
      .update(file)
      .update('\0')
      .update(readFileSync(join(SOURCE_DIR, file)));
  const dir = join(process.env.SVC_CACHE_DIR || join(homedir(), '.cache', 'svc'), 'bin');
  const out = join(dir, `pacer-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(out)) return out;
  mkdirSync(dir, { recursive: true });
  const tmp = `${out}.tmp.${process.pid}`;
  const built = spawnSync('go', ['build', '-trimpath', '-buildvcs=false', '-o', tmp, '.'], {
    cwd: SOURCE_DIR,
    env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=readonly', CGO_ENABLED: '0' },
    encoding: 'utf8',
  });
  if (built.error) throw new Error(`cannot build bench/pacer: ${built.error.message} (Go >= 1.24 is required, as for FerretDB)`);
  if (built.status !== 0) throw new Error(`cannot build bench/pacer: go build exited ${built.status}\n${built.stderr}`);
  renameSync(tmp, out);
  return out;
}

/** graceSeconds: how long after the last request was due an unanswered one counts as a timeout. */
export function goPacedLoad(binary: string, spec: PacedSpec, graceSeconds = 10): Promise<GoPacedResult> {
  const url = new URL(spec.url);
  const requests = wireRequests(spec).map((b) => b.toString('base64'));
  const input = JSON.stringify({
    host: url.hostname,
    port: Number(url.port),
    connections: spec.connections,
    seconds: spec.seconds,
    rate: spec.rate,
    requests,
    expectBodyPrefix: spec.expectBodyPrefix,
    graceSeconds,
  });
  return new Promise((resolve, reject) => {
    const child = spawn(binary, [], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const errOut: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => errOut.push(b));
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (code !== 0) {
        reject(new Error(`bench/pacer exited ${signal ?? code}: ${Buffer.concat(errOut).toString().trim()}`));
        return;
      }
      try {
        resolve(parseResult(Buffer.concat(out).toString('utf8')));
      } catch (e) {
        reject(e);
      }
    });
    child.stdin.end(input);
  });
}

interface Wire {
  latenciesMs: number[] | null;
  releasedAtMs: number[] | null;
  completed: number;
  statusCodes: Record<string, number>;
  mismatches: number;
  errors: number;
  timeouts: number;
  seconds: number;
  lateMaxMs: number;
  cpuMs: number;
  waitMs: number;
}

function parseResult(text: string): GoPacedResult {
  const w = JSON.parse(text) as Wire;
  if (typeof w.completed !== 'number' || typeof w.seconds !== 'number') throw new Error('bench/pacer printed no result');
  return {
    latenciesMs: Float64Array.from(w.latenciesMs ?? []),
    releasedAtMs: Float64Array.from(w.releasedAtMs ?? []),
    completed: w.completed,
    statusCodes: w.statusCodes,
    mismatches: w.mismatches,
    errors: w.errors,
    timeouts: w.timeouts,
    seconds: w.seconds,
    lateMaxMs: w.lateMaxMs,
    cpuMs: w.cpuMs,
    waitMs: w.waitMs < 0 ? Number.NaN : w.waitMs,
  };
}
