import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * Lowers the CPU priority (nice) of this process's child processes that `match` names (a browser
 * and the helpers it has started so far; those it starts later inherit the value). Work a customer
 * sets off in a browser then waits for the loop that answers everyone. Linux only (/proc); a no-op
 * elsewhere or when not allowed.
 */
export function lowerChildPriority(nice: number, match: (command: string) => boolean): number {
  let lowered = 0;
  try {
    const parents = new Map<number, number>();
    const commands = new Map<number, string>();
    for (const entry of readdirSync('/proc')) {
      const pid = Number(entry);
      if (!Number.isInteger(pid)) continue;
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        // The command in parentheses may hold spaces: the fields after the last ')' are fixed.
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        parents.set(pid, Number(fields[1]));
        commands.set(pid, stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')));
      } catch {
        // gone meanwhile
      }
    }
    const descends = (pid: number): boolean => {
      for (let p = parents.get(pid), hops = 0; p !== undefined && p > 1 && hops < 64; p = parents.get(p), hops++)
        if (p === process.pid) return true;
      return false;
    };
    for (const [pid, command] of commands) {
      if (!match(command) || !descends(pid)) continue;
      try {
        setPriority(pid, nice);
        lowered++;
      } catch {
        // not ours to change
      }
    }
  } catch {
    // no /proc
  }
  return lowered;
}

const CHRT_PATHS = ['/usr/bin/chrt', '/bin/chrt'];

/**
 * The command prefix that starts a program under SCHED_IDLE (`chrt --idle 0`), or [] when chrt is
 * not installed. Nice alone does not hold a browser down: Chromium raises its own GPU and
 * compositor threads to nice -8 whenever it may (as root, or with CAP_SYS_NICE), above the loop
 * that answers everyone; `npm run noisy` saw them at -8 taking B's /validate p99 from 11 to 60 ms.
 * Under SCHED_IDLE a nice value changes nothing, the policy is inherited by every process the
 * program starts, and any program may take it without privileges.
 */
export function idleSchedulingPrefix(): string[] {
  const chrt = CHRT_PATHS.find((path) => existsSync(path));
  return chrt ? [chrt, '--idle', '0'] : [];
}
