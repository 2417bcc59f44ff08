/**
 * What each candidate of a hybrid search is scored on in `learn-rank.ts`, from the three single-list
 * searches alone (BM25, vectors, the chunks the query names), as either engine gives them.
 *
 * The first four columns are the reciprocal-rank fusion's own terms (rank r scores 60 / (60 + r),
 * the RRF of services/rag/index-store/fusion.ts scaled by 60): with `RRF_WEIGHTS` the linear score is
 * 60 times the shipped fusion's score. The rest say what ranks alone do not: how far a chunk's cosine
 * is below the best one, how strong its BM25 score is against the best, how its file fares in each
 * list (a question usually has one answering file), and whether the file's path holds the question's
 * words. None of them earned a place in the service (README.md, "Learned weights").
 */

import { pathTerms } from '../../services/rag/chunking/identifiers.ts';
import { allQueryTerms } from '../../services/rag/index-store/query-profile.ts';
import type { RankedChunk } from '../../services/rag/index-store/types.ts';

export const FEATURES = [
  /** BM25's reciprocal rank, for a query written in code or naming a chunk */
  'bm25Code',
  /** BM25's reciprocal rank, for a plain-text query */
  'bm25Plain',
  /** the vectors' reciprocal rank */
  'vector',
  /** the named list's reciprocal rank */
  'named',
  /** cosine minus the best candidate's (the last listed cosine when the chunk is not listed) */
  'cosineGap',
  /** BM25 score over the best BM25 score (0 when not listed) */
  'bm25Relative',
  /** the reciprocal rank of its file's best chunk in the vectors */
  'fileVector',
  /** the reciprocal rank of its file's best chunk in BM25 */
  'fileBm25',
  /** the share of the vector list that is its file's chunks */
  'fileVectorShare',
  /** the share of the query's terms of 3 letters or more that its file's path holds */
  'pathTerms',
] as const;

export type FeatureName = (typeof FEATURES)[number];
export type RankWeights = Readonly<Record<FeatureName, number>>;

/** The reciprocal-rank fusion as it shipped before the learned weights (store.ts's constants). */
export const RRF_WEIGHTS: RankWeights = {
  bm25Code: 1,
  bm25Plain: 0.4,
  vector: 1,
  named: 1,
  cosineGap: 0,
  bm25Relative: 0,
  fileVector: 0,
  fileBm25: 0,
  fileVectorShare: 0,
  pathTerms: 0,
};

export interface CandidateLists {
  readonly query: string;
  /** written in code or naming a chunk (query-profile.ts) */
  readonly codeQuery: boolean;
  readonly bm25: readonly RankedChunk[];
  readonly vector: readonly RankedChunk[];
  readonly named: readonly RankedChunk[];
}

export interface Candidate {
  readonly rowId: number;
  readonly path: string;
  /** first seen across BM25, vectors, named, in that order: the tie-break */
  readonly order: number;
  /** one value per entry of FEATURES */
  readonly features: Float64Array;
}

const reciprocal = (rank: number | undefined) => (rank === undefined ? 0 : 60 / (60 + rank));

/** Every chunk any list holds, with its feature row. */
export function candidatesOf(lists: CandidateLists): Candidate[] {
  const bm25Rank = ranks(lists.bm25);
  const vectorRank = ranks(lists.vector);
  const namedRank = ranks(lists.named);
  const cosine = new Map(lists.vector.map((r) => [r.rowId, r.score]));
  const bestCosine = lists.vector[0]?.score ?? 0;
  const floorCosine = lists.vector.at(-1)?.score ?? 0;
  const bm25Score = new Map(lists.bm25.map((r) => [r.rowId, r.score]));
  const bestBm25 = lists.bm25[0]?.score ?? 0;

  const fileBestVector = bestRankByFile(lists.vector);
  const fileBestBm25 = bestRankByFile(lists.bm25);
  const fileVectorCount = new Map<string, number>();
  for (const r of lists.vector) fileVectorCount.set(r.path, (fileVectorCount.get(r.path) ?? 0) + 1);
  const queryTerms = [...allQueryTerms(lists.query)].filter((t) => t.length >= 3);
  const pathShare = new Map<string, number>();

  const out: Candidate[] = [];
  const seen = new Set<number>();
  for (const list of [lists.bm25, lists.vector, lists.named]) {
    for (const r of list) {
      if (seen.has(r.rowId)) continue;
      seen.add(r.rowId);
      let share = pathShare.get(r.path);
      if (share === undefined) {
        const inPath = new Set(pathTerms(r.path));
        share = queryTerms.length === 0 ? 0 : queryTerms.filter((t) => inPath.has(t)).length / queryTerms.length;
        pathShare.set(r.path, share);
      }
      const b = reciprocal(bm25Rank.get(r.rowId));
      const f = new Float64Array(FEATURES.length);
      f[0] = lists.codeQuery ? b : 0;
      f[1] = lists.codeQuery ? 0 : b;
      f[2] = reciprocal(vectorRank.get(r.rowId));
      f[3] = reciprocal(namedRank.get(r.rowId));
      f[4] = (cosine.get(r.rowId) ?? floorCosine) - bestCosine;
      f[5] = bestBm25 > 0 ? (bm25Score.get(r.rowId) ?? 0) / bestBm25 : 0;
      f[6] = reciprocal(fileBestVector.get(r.path));
      f[7] = reciprocal(fileBestBm25.get(r.path));
      f[8] = lists.vector.length === 0 ? 0 : (fileVectorCount.get(r.path) ?? 0) / lists.vector.length;
      f[9] = share;
      out.push({ rowId: r.rowId, path: r.path, order: out.length, features: f });
    }
  }
  return out;
}

export function weightVector(weights: RankWeights): Float64Array {
  return Float64Array.from(FEATURES, (name) => weights[name]);
}

/** The linear score of one feature row. */
export function linearScore(features: Float64Array, weights: Float64Array): number {
  let s = 0;
  for (let i = 0; i < features.length; i++) s += (features[i] as number) * (weights[i] as number);
  return s;
}

function ranks(list: readonly RankedChunk[]): Map<number, number> {
  const out = new Map<number, number>();
  list.forEach((r, i) => {
    if (!out.has(r.rowId)) out.set(r.rowId, i + 1);
  });
  return out;
}

function bestRankByFile(list: readonly RankedChunk[]): Map<string, number> {
  const out = new Map<string, number>();
  list.forEach((r, i) => {
    if (!out.has(r.path)) out.set(r.path, i + 1);
  });
  return out;
}
