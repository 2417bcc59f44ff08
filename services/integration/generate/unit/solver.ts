/**
 * Finds leaf values that make a test pass (a guard fire, a branch be taken): starting from every
 * leaf's ordinary value, it changes as few leaves as it can, trying each leaf's candidates in
 * order, first only values its declared type allows, then any. Deterministic, and bounded.
 */

import type { Assignment } from './arguments.ts';
import type { LeafParam } from './signature.ts';
import { conforms } from './type-desc.ts';
import { OMIT } from './values.ts';
import type { Arg } from './values.ts';

export interface SearchSpace {
  leaves: readonly LeafParam[];
  pools: ReadonlyMap<string, readonly Arg[]>;
  /** the leaves the conditions read: the only ones worth changing */
  vary: readonly string[];
}

const MAX_CHANGED = 3;
/** simulations per pass (typed values only, then any): a few milliseconds each for small functions */
const BUDGET = 3_000;
const MAX_CLIMB_ROUNDS = 64;

/** `base` defaults to every leaf's ordinary value; the planner passes one that gets past the guards. */
export function solve(
  space: SearchSpace,
  accept: (assignment: Assignment) => boolean,
  base: Assignment = baseAssignment(space),
): Assignment | undefined {
  for (const strict of [true, false]) {
    let budget = BUDGET;
    const alternatives = new Map<string, Arg[]>();
    for (const id of space.vary) {
      const leaf = space.leaves.find((l) => l.id === id);
      if (!leaf) continue;
      const pool = space.pools.get(id) ?? [];
      alternatives.set(
        id,
        pool.filter((v) => v !== base.get(id) && (!strict || typed(leaf, v))),
      );
    }
    const ids = [...alternatives.keys()];
    search: for (let k = strict ? 0 : 1; k <= Math.min(MAX_CHANGED, ids.length); k++) {
      for (const chosen of combinations(ids, k)) {
        const found = product(chosen, alternatives, base, accept, () => --budget >= 0);
        if (found) return found;
        if (budget < 0) break search;
      }
    }
  }
  return undefined;
}

/**
 * Hill-climbs from the ordinary values, one leaf at a time, while `score` rises: how arguments
 * that get past a long run of guards are found without trying every combination.
 */
export function climb(space: SearchSpace, score: (assignment: Assignment) => number): Assignment {
  const current = baseAssignment(space);
  let best = score(current);
  for (let round = 0; round < MAX_CLIMB_ROUNDS; round++) {
    let improved = false;
    for (const strict of [true, false]) {
      for (const id of space.vary) {
        const leaf = space.leaves.find((l) => l.id === id);
        if (!leaf) continue;
        const before = current.get(id) as Arg;
        for (const value of space.pools.get(id) ?? []) {
          if (value === before || (strict && !typed(leaf, value))) continue;
          current.set(id, value);
          const s = score(current);
          if (s > best) {
            best = s;
            improved = true;
            break;
          }
          current.set(id, before);
        }
        if (improved) break;
      }
      if (improved) break;
    }
    if (!improved) break;
  }
  return current;
}

function* combinations(ids: readonly string[], k: number, start = 0): Generator<string[]> {
  if (k === 0) {
    yield [];
    return;
  }
  for (let i = start; i <= ids.length - k; i++) {
    for (const rest of combinations(ids, k - 1, i + 1)) yield [ids[i] as string, ...rest];
  }
}

function product(
  chosen: readonly string[],
  alternatives: ReadonlyMap<string, Arg[]>,
  base: ReadonlyMap<string, Arg>,
  accept: (assignment: Assignment) => boolean,
  spend: () => boolean,
): Assignment | undefined {
  const current = new Map(base);
  const walk = (i: number): Assignment | undefined => {
    if (i === chosen.length) {
      if (!spend()) return undefined;
      return accept(current) ? new Map(current) : undefined;
    }
    const id = chosen[i] as string;
    for (const value of alternatives.get(id) ?? []) {
      current.set(id, value);
      const found = walk(i + 1);
      if (found) return found;
    }
    current.set(id, base.get(id) as Arg);
    return undefined;
  };
  return walk(0);
}

/** Every leaf at its ordinary value: the first candidate its declared type allows. */
export function baseAssignment(space: SearchSpace): Map<string, Arg> {
  const base = new Map<string, Arg>();
  for (const leaf of space.leaves) {
    const pool = space.pools.get(leaf.id) ?? [];
    const first = pool.find((v) => typed(leaf, v)) ?? pool[0];
    if (first !== undefined) base.set(leaf.id, first);
  }
  return base;
}

function typed(leaf: LeafParam, value: Arg): boolean {
  if (value === OMIT && leaf.optional) return true;
  return !leaf.declared || conforms(value, leaf.type);
}
