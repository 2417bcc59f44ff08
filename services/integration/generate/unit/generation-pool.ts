import { WorkPool, type WorkPoolOptions } from '../../../platform/work/work-pool.ts';

type Budget = Pick<WorkPoolOptions, 'threads' | 'memoryMb' | 'timeoutMs' | 'queuePerTenant'>;

/**
 * Budgets of test generation on its worker thread. A module of a few hundred guards takes the
 * solver seconds (each unsolvable guard spends its whole search budget), so the time budget leaves
 * room for a large real module and stops a crafted one. The heap budget bounds the planner's and
 * solver's objects; tree-sitter's trees live in wasm memory, which it does not count, and which the
 * readers' file size limit bounds instead.
 */
export const GENERATION_BUDGET: Readonly<Budget> = {
  threads: 1,
  memoryMb: 256,
  timeoutMs: 20_000,
  /** Requests one customer may have waiting behind its running one; past it: 429. */
  queuePerTenant: 4,
};

/** One per integration engine (per process): one customer's generation runs at a time while others wait their turn. */
export function generationPool(budget: Partial<Budget> = {}): WorkPool {
  return new WorkPool({ name: 'test generation', ...GENERATION_BUDGET, ...budget, runningPerTenant: 1 });
}
