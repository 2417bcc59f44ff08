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
 *
 * nDCG@10, binary relevance: the query's distinct answers are its answer ranges (line level) or its
 * distinct answer files (file level), R of them. The hit at rank i (1-based, i <= 10) gains 1 when it
 * is relevant to at least one distinct answer that no higher-ranked hit was relevant to, else 0 (a
 * second chunk of an answer already found adds nothing). DCG@10 = sum of gain_i / log2(i + 1); the
 * ideal DCG@10 = sum over i = 1..min(R, 10) of 1 / log2(i + 1), every distinct answer found at the top;
 * nDCG@10 = DCG@10 / ideal DCG@10, in [0, 1]. Unlike recall and MRR it rewards finding every
 * alternative: one of two answers at rank 1 scores 1 / (1 + 1 / log2 3) = 0.61.
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

/** The answers counted apart by nDCG: distinct ranges at line level, distinct files at file level. */
function distinctAnswers(answers: readonly AnswerRange[], fileLevel: boolean): AnswerRange[] {
  const seen = new Map<string, AnswerRange>();
  for (const a of answers) {
    const key = fileLevel ? a.file : `${a.file}\u0000${a.lines[0]}\u0000${a.lines[1]}`;
    if (!seen.has(key)) seen.set(key, a);
  }
  return [...seen.values()];
}

/** nDCG@k with binary relevance, as defined at the top of this file (k = 10 in the bench). */
export function ndcgAt(hits: readonly RangeHit[], answers: readonly AnswerRange[], fileLevel = false, k = 10): number {
  const distinct = distinctAnswers(answers, fileLevel);
  if (distinct.length === 0) return 0;
  const found = new Set<number>();
  let dcg = 0;
  hits.slice(0, k).forEach((hit, i) => {
    let gain = 0;
    distinct.forEach((a, j) => {
      if (found.has(j) || !relevant(hit, a, fileLevel)) return;
      found.add(j);
      gain = 1;
    });
    dcg += gain / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(distinct.length, k); i++) ideal += 1 / Math.log2(i + 2);
  return dcg / ideal;
}

/** What one ranked list scored for one query. */
export interface QueryOutcome {
  /** 1-based rank of the first relevant hit in the list, undefined when none is */
  readonly rank: number | undefined;
  readonly ndcgAt10: number;
}

export function outcome(hits: readonly RangeHit[], answers: readonly AnswerRange[], fileLevel = false): QueryOutcome {
  return { rank: firstRelevantRank(hits, answers, fileLevel), ndcgAt10: ndcgAt(hits, answers, fileLevel, 10) };
}

export interface Scores {
  readonly recallAt5: number;
  readonly recallAt10: number;
  readonly mrr: number;
  readonly ndcgAt10: number;
  readonly queries: number;
}

/** Means over the queries; the lists scored are top-10 lists, so MRR only sees ranks up to 10. */
export function score(outcomes: readonly QueryOutcome[]): Scores {
  const n = outcomes.length;
  if (n === 0) return { recallAt5: 0, recallAt10: 0, mrr: 0, ndcgAt10: 0, queries: 0 };
  const within = (k: number) => outcomes.filter((o) => o.rank !== undefined && o.rank <= k).length / n;
  const mean = (value: (o: QueryOutcome) => number) => outcomes.reduce((sum, o) => sum + value(o), 0) / n;
  return {
    recallAt5: within(5),
    recallAt10: within(10),
    mrr: mean((o) => (o.rank === undefined ? 0 : 1 / o.rank)),
    ndcgAt10: mean((o) => o.ndcgAt10),
    queries: n,
  };
}

/** Nearest-rank percentile of samples (ms). */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}
