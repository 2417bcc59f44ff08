/**
 * Collects the cases and the skipped targets of one generation: searches arguments for a target,
 * de-duplicates identical calls with identical assertions, and says why a target found none.
 */

import type { Assignment } from './arguments.ts';
import { bindArgs } from './arguments.ts';
import { evaluate, Unsolvable } from './evaluate.ts';
import type { Expr } from './expr.ts';
import { oneLine } from './expr.ts';
import type { Trace } from './simulate.ts';
import { climb, solve } from './solver.ts';
import { argsOf, callText, traceOf } from './subject.ts';
import type { Expectation, Subject } from './subject.ts';
import { valueKey } from './values.ts';
import type { Arg } from './values.ts';

const MAX_CACHED_TRACES = 50_000;

/** How far a call gets: conditions decided on the way, most for getting out at the top level without throwing. */
function progress(trace: Trace): number {
  const { outcome } = trace;
  const through = trace.exitDepth === 0 && (outcome.kind === 'returns' || outcome.kind === 'unknown' || outcome.kind === 'dom');
  return trace.visits.size + (through ? 1_000 : 0) + (outcome.kind === 'returns' ? 1 : 0);
}

export type CaseKind = 'happy' | 'example' | 'error' | 'boundary' | 'branch' | 'usage';

export interface PlannedCase {
  name: string;
  kind: CaseKind;
  line: number;
  /** the call expression, ready for the test */
  call: string;
  expectation: Expectation;
}

export interface Skip {
  reason: string;
  line?: number;
}

export interface Found {
  assignment: Assignment;
  args: Arg[];
  trace: Trace;
}

export class Planner {
  readonly subject: Subject;
  readonly cases: PlannedCase[] = [];
  readonly skipped: Skip[] = [];
  private readonly seen = new Set<string>();
  private readonly traces = new Map<string, Trace>();
  private anchored: Assignment | undefined;

  constructor(subject: Subject) {
    this.subject = subject;
  }

  trace(args: readonly Arg[]): Trace {
    const key = args.map(valueKey).join('|');
    let trace = this.traces.get(key);
    if (!trace) {
      trace = traceOf(this.subject, args);
      // Traces hold copies of the names at each condition: keep memory bounded on large functions.
      if (this.traces.size >= MAX_CACHED_TRACES) this.traces.clear();
      this.traces.set(key, trace);
    }
    return trace;
  }

  /**
   * Arguments that get as far through the function as the search can take them: the base every
   * other search changes as few leaves of as it can.
   */
  anchor(): Assignment {
    this.anchored ??= climb(this.subject.space, (a) => progress(this.trace(argsOf(this.subject, a))));
    return this.anchored;
  }

  /** The first arguments that pass one of `accepts`, tried in order (a stronger case first). */
  find(accepts: ReadonlyArray<(trace: Trace, args: readonly Arg[]) => boolean>): Found | undefined {
    for (const accept of accepts) {
      const assignment = solve(
        this.subject.space,
        (a: Assignment) => {
          const args = argsOf(this.subject, a);
          return accept(this.trace(args), args);
        },
        this.anchor(),
      );
      if (assignment) {
        const args = argsOf(this.subject, assignment);
        return { assignment, args, trace: this.trace(args) };
      }
    }
    return undefined;
  }

  baseArgs(): Arg[] {
    return argsOf(this.subject, this.anchor());
  }

  /** Adds a case unless the same call with the same assertion is already there. */
  add(kind: CaseKind, line: number, args: readonly Arg[], expectation: Expectation, suffix = ''): void {
    const call = callText(this.subject, args);
    const key = `${call}|${JSON.stringify(expectation.assertion)}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    const name = `${oneLine(call, 70)} ${expectation.text}${suffix}`.replace(/\s+/g, ' ').trim();
    this.cases.push({ name, kind, line, call, expectation });
  }

  skip(reason: string, line?: number): void {
    if (this.skipped.some((s) => s.reason === reason && s.line === line)) return;
    this.skipped.push(line === undefined ? { reason } : { reason, line });
  }

  /**
   * Why no arguments were found for `what` at `line` (undefined: anywhere): a condition on the way
   * the evaluator cannot decide, one it cannot read, or none of the values tried reach it.
   */
  unsolved(what: string, line: number | undefined, test?: Expr): void {
    const args = this.baseArgs();
    const base = this.trace(args).outcome;
    if (base.kind === 'stuck' && (line === undefined || base.line <= line)) {
      this.skip(`${what}: ${base.reason}`, line ?? base.line);
      return;
    }
    if (test) {
      try {
        evaluate(test, bindArgs(this.subject.signature.params, args, this.subject.constants));
      } catch (error) {
        if (error instanceof Unsolvable) {
          this.skip(`${what}: the generator cannot evaluate it (${error.message})`, line);
          return;
        }
      }
    }
    this.skip(`${what}: none of the argument values derived from the code reach it`, line);
  }
}
