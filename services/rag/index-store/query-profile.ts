/**
 * What a query says about itself, for the fusion: whether it is written in code (an identifier
 * such as `checkOut`, `max_pool`, `MONGODB_LOG_PATH`, `Pool.clear`) and whether it names chunks
 * (name-index.ts: `checkOut`, `check out` name `ConnectionPool.checkOut`).
 *
 * Both decide how much the BM25 list counts. When a question names code, matching its words is
 * strong evidence; when it is plain English ("where are idle sockets closed"), the same words mostly
 * hit comments and unrelated names, and the vectors are the better judge (bench/rag.ts measured
 * both; see README.md).
 */

import { termsOf } from '../chunking/identifiers.ts';

/** camelCase, snake_case / SCREAMING_CASE, or a dotted name, anywhere in the query */
const CODE_TOKEN = /\p{Ll}\p{Lu}|[\p{L}\p{N}]_[\p{L}\p{N}]|\p{L}\.\p{L}/u;

export function looksLikeCode(query: string): boolean {
  return CODE_TOKEN.test(query);
}

/** Every term of the query, stop words included (they are parts of names: `retryFor`). */
export function allQueryTerms(query: string): Set<string> {
  return new Set(termsOf(query));
}
