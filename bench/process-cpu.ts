/**
 * CPU time of this process and every process below it (the throwaway stack's Kafka, FerretDB,
 * PostgreSQL, Mailpit, schema registry), grouped by what each one is, from /proc. A latency on a
 * 2-core machine swings by half between runs of the same code; the CPU a workload costs moves far
 * less, so a change to the path's work is judged by it (docs/benchmarks.md, issue 37).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Linux's USER_HZ: /proc counts CPU in these ticks, 100 per second on every architecture Node runs on. */
const TICKS_PER_SECOND = 100;

export interface ProcStat {
  pid: number;
  ppid: number;
  /** The command name (up to 15 characters, as the kernel keeps it). */
  comm: string;
  /** User plus system CPU of every thread of the process, in ms. */
  cpuMs: number;
}

/**
 * One /proc/<pid>/stat line (pure). The command name sits between the first "(" and the last ")"
 * and may itself hold spaces and parentheses, so the fields are counted from the last ")".
 */
export function parseProcStat(line: string): ProcStat | undefined {
  const open = line.indexOf('(');
  const close = line.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const pid = Number(line.slice(0, open).trim());
  const fields = line
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  // After the name: state, ppid, ... utime is the 14th field of the line and stime the 15th.
  const ppid = Number(fields[1]);
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (![pid, ppid, utime, stime].every(Number.isFinite)) return undefined;
  return { pid, ppid, comm: line.slice(open + 1, close), cpuMs: ((utime + stime) * 1000) / TICKS_PER_SECOND };
}

/** The processes whose parent chain reaches `root`, root included (pure). */
export function descendantsOf(root: number, all: readonly ProcStat[]): ProcStat[] {
  const children = new Map<number, ProcStat[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const out: ProcStat[] = [];
  const self = all.find((p) => p.pid === root);
  if (self) out.push(self);
  const queue = [root];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    for (const c of children.get(pid) ?? []) {
      out.push(c);
      queue.push(c.pid);
    }
  }
  return out;
}

/** The roles of the stack's own servers, as roleOf names them. */
export const STACK_ROLES = ['Kafka', 'schema registry', 'FerretDB', 'PostgreSQL', 'Mailpit'] as const;
export type Role = (typeof STACK_ROLES)[number] | 'this process (the services, the bench client)' | 'other';

/** What a process of the stack is, by its name and command line (pure); the supervising shells are "other". */
export function roleOf(comm: string, cmdline: string, isRoot: boolean): Role {
  if (isRoot) return 'this process (the services, the bench client)';
  if (comm === 'java' || comm.startsWith('java')) {
    if (cmdline.includes('kafka.Kafka')) return 'Kafka';
    if (cmdline.includes('schema-registry') || cmdline.includes('apicurio')) return 'schema registry';
    return 'other';
  }
  if (comm.startsWith('ferretdb')) return 'FerretDB';
  if (comm.startsWith('postgres')) return 'PostgreSQL';
  if (comm.startsWith('mailpit')) return 'Mailpit';
  return 'other';
}

/** Every process's /proc/<pid>/stat, parsed; throws where /proc cannot be listed (not Linux). */
export function readStats(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = parseProcStat(readFileSync(`/proc/${name}/stat`, 'utf8'));
      if (stat) out.push(stat);
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return out;
}

function cmdlineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** CPU ms by role for this process and its descendants; undefined where /proc cannot be read (not Linux). */
export function sampleTreeCpu(root = process.pid): Map<string, number> | undefined {
  let stats: ProcStat[];
  try {
    stats = readStats();
  } catch {
    return undefined;
  }
  const tree = descendantsOf(root, stats);
  if (tree.length === 0) return undefined;
  const byRole = new Map<string, number>();
  for (const p of tree) {
    const role = roleOf(p.comm, p.comm.startsWith('java') ? cmdlineOf(p.pid) : '', p.pid === root);
    byRole.set(role, (byRole.get(role) ?? 0) + p.cpuMs);
  }
  return byRole;
}

/** What each role used between two samples, in ms (pure); a process gone meanwhile counts as nothing. */
export function cpuBetween(before: ReadonlyMap<string, number>, after: ReadonlyMap<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [role, ms] of after) out.set(role, Math.max(0, ms - (before.get(role) ?? 0)));
  return out;
}

/**
 * One /proc/<pid>/task/<tid>/schedstat line (pure): the thread's time on a CPU, its time runnable
 * but waiting for one (run_delay), and its timeslices. Both times are in ns; returned in ms.
 */
export function parseSchedstat(line: string): { cpuMs: number; waitMs: number } | undefined {
  const [cpu, wait] = line.trim().split(/\s+/).map(Number);
  if (cpu === undefined || wait === undefined || !Number.isFinite(cpu) || !Number.isFinite(wait)) return undefined;
  return { cpuMs: cpu / 1e6, waitMs: wait / 1e6 };
}

/**
 * How long this process's main thread, the one that runs the event loop, has waited for a CPU while
 * runnable, in ms; undefined where the kernel keeps no schedstats. A request that waits while
 * another thread or process holds the core shows here and in no event-loop delay.
 */
function loopThreadWaitMs(): number | undefined {
  try {
    return parseSchedstat(readFileSync('/proc/self/schedstat', 'utf8'))?.waitMs;
  } catch {
    return undefined;
  }
}

/** Starts timing loopThreadWaitMs: the returned function gives the ms waited since, NaN where it is unknown. */
export function watchLoopThreadWait(): () => number {
  const start = loopThreadWaitMs();
  return () => {
    const now = loopThreadWaitMs();
    return start !== undefined && now !== undefined ? now - start : Number.NaN;
  };
}
