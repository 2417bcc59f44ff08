/**
 * User text -> an FTS5 MATCH expression. Every term is a quoted string joined by OR, so nothing a
 * user types (`AND`, `NEAR(`, `col:`, `*`, `^`, quotes, parentheses) is read as FTS5 syntax, and a
 * chunk need not contain every word to be found: BM25 ranks by how many and how rare.
 */

import { termsOf } from '../chunking/identifiers.ts';

/**
 * English function words that carry no meaning in a question about code ("where are retries backed
 * off"). Left in, they match comments all over a code base and push chunks that name the subject
 * down. Words that are also common identifiers (`get`, `set`, `new`, `type`, `key`, `value`) are
 * not in the list.
 */
export const QUERY_STOP_WORDS: ReadonlySet<string> = new Set([
  'a',
  'about',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'been',
  'being',
  'by',
  'can',
  'could',
  'did',
  'do',
  'does',
  'done',
  'for',
  'from',
  'gets',
  'had',
  'has',
  'have',
  'how',
  'i',
  'in',
  'into',
  'is',
  'it',
  'its',
  'me',
  'my',
  'of',
  'on',
  'or',
  'our',
  'should',
  'so',
  'some',
  'that',
  'the',
  'their',
  'them',
  'then',
  'there',
  'these',
  'they',
  'this',
  'those',
  'to',
  'was',
  'we',
  'were',
  'what',
  'when',
  'where',
  'which',
  'who',
  'whom',
  'why',
  'will',
  'with',
  'would',
  'you',
  'your',
]);

/** The most terms a query contributes: bounds the work of one query whatever its length. */
export const MAX_QUERY_TERMS = 32;

/** The distinct search terms of a query, stop words dropped (kept when the query has nothing else). */
export function queryTerms(query: string): string[] {
  const all = [...new Set(termsOf(query))];
  const meaningful = all.filter((t) => !QUERY_STOP_WORDS.has(t));
  return (meaningful.length > 0 ? meaningful : all).slice(0, MAX_QUERY_TERMS);
}

/** An FTS5 MATCH expression, or undefined when the query has no terms at all. */
export function ftsMatchExpression(query: string): string | undefined {
  const terms = queryTerms(query);
  if (terms.length === 0) return undefined;
  return terms.map(quote).join(' OR ');
}

/** An FTS5 string: double quotes inside are doubled. */
export function quote(term: string): string {
  return `"${term.replaceAll('"', '""')}"`;
}
