/**
 * Which evaluation sets a bench:rag run scores (BENCH_RAG_EVAL): `all` (or unset) is every set in
 * the folder; otherwise a comma-separated list of paths or names (`undici-7.29.0.json`,
 * `undici-7.29.0`). A name that is not a set in the folder is refused, so a typo does not silently
 * measure something else.
 */

import { basename, join } from 'node:path';

export const EVAL_FOLDER = 'bench/rag-eval';

/** `present`: the file names in the folder; returns paths, in the order asked (`all`: sorted). */
export function evalFilesOf(value: string | undefined, present: readonly string[], folder = EVAL_FOLDER): string[] {
  const sets = present.filter((name) => name.endsWith('.json')).sort();
  const asked = (value ?? '').trim();
  if (asked === '' || asked === 'all') {
    if (sets.length === 0) throw new Error(`no evaluation set (*.json) in ${folder}`);
    return sets.map((name) => join(folder, name));
  }
  const chosen: string[] = [];
  for (const entry of asked.split(',').map((s) => s.trim())) {
    if (entry === '') continue;
    const name = basename(entry).endsWith('.json') ? basename(entry) : `${basename(entry)}.json`;
    if (!sets.includes(name)) {
      throw new Error(`BENCH_RAG_EVAL: ${entry} is not an evaluation set in ${folder} (there: ${sets.join(', ')}; or all)`);
    }
    const path = join(folder, name);
    if (!chosen.includes(path)) chosen.push(path);
  }
  if (chosen.length === 0) throw new Error('BENCH_RAG_EVAL names no evaluation set');
  return chosen;
}
