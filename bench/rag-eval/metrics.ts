/**
 * How a ranked list is scored against the answers.
 *
 * A hit is relevant to an answer when it is in the same file, overlaps the answer's lines, and at
 * least a third of its own lines lie inside them: a chunk mostly about something else (a class
 * outline spanning 700 lines around a 20-line answer) does not count. `fileLevel` only asks for the
 * right file.
 *
 * recall@k: the share of queries with a relevant hit in the top k (each query has one topic; its
 * answers are alternatives, such as a function and the helper it calls). MRR: the mean of
 * 1 / rank of the first relevant hit, 0 when none is in the list.
 */

export interface RangeHit {
  readonly file: string;
  readonly startLine: number;
  readonly endLine: number;
}

export interface AnswerRange {
  readonly file: string;
  readonly lines: readonly [number, number];
}

export function relevant(hit: RangeHit, answer: AnswerRange, fileLevel = false): boolean {
  if (hit.file !== answer.file) return false;
  if (fileLevel) return true;
  const overlap = Math.min(hit.endLine, answer.lines[1]) - Math.max(hit.startLine, answer.lines[0]) + 1;
  return overlap > 0 && overlap * 3 >= hit.endLine - hit.startLine + 1;
}

/** 1-based rank of the first relevant hit, or undefined. */
export function firstRelevantRank(hits: readonly RangeHit[], answers: readonly AnswerRange[], fileLevel = false): number | undefined {
  const i = hits.findIndex((h) => answers.some((a) => relevant(h, a, fileLevel)));
  return i === -1 ? undefined : i + 1;
}

export interface Scores {
  readonly recallAt5: number;
  readonly mrr: number;
  readonly queries: number;
}

export function score(ranks: ReadonlyArray<number | undefined>, k = 5): Scores {
  const n = ranks.length;
  if (n === 0) return { recallAt5: 0, mrr: 0, queries: 0 };
  const found = ranks.filter((r) => r !== undefined && r <= k).length;
  const mrr = ranks.reduce<number>((sum, r) => sum + (r === undefined ? 0 : 1 / r), 0) / n;
  return { recallAt5: found / n, mrr, queries: n };
}

/** Nearest-rank percentile of samples (ms). */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}
