/**
 * Search terms for the BM25 side of hybrid search. Code names a thing `parseHTTPResponse2`, people
 * ask for "parse http response": each identifier yields its lowercased parts and, when it has more
 * than one, itself whole (so an exact-name query still ranks the exact name first).
 *
 * Terms hold only letters, digits, `_` and `-`. SQLite FTS5's default tokenizer splits on `_` and
 * `-`, which keeps the parts and loses the whole snake/kebab names; create the table with
 * `tokenize = "unicode61 tokenchars '_-'"` to keep them, and run queries through `termsOf` too.
 */

/** Runs of word characters, with single inner dashes (kebab-case); `$` is part of JS names. */
const TOKEN = /[\p{L}\p{N}_$]+(?:-[\p{L}\p{N}_$]+)*/gu;
/**
 * One word of an identifier: an acronym ending in a plural `s` (`URLs`), an acronym not followed
 * by a lowercase letter (`HTTP` in `HTTPResponse`), a capitalized or lowercase word, digits, or a
 * run of letters without case (CJK).
 */
const WORD = /\p{Lu}{2,}s(?!\p{Ll})|\p{Lu}+(?!\p{Ll})|\p{Lu}?\p{Ll}+|\p{N}+|\p{L}+/gu;
/** Longer tokens are hashes, base64 or minified noise, not names anyone searches for. */
const MAX_TERM_LENGTH = 64;

/** `parseHTTPResponse2` -> `['parse', 'http', 'response', '2']` */
export function splitIdentifier(identifier: string): string[] {
  const parts: string[] = [];
  for (const piece of identifier.split(/[_\-$]+/)) {
    for (const word of piece.match(WORD) ?? []) parts.push(word.toLowerCase());
  }
  return parts;
}

/** The terms of a text, in order, repeats kept (term frequency is what BM25 counts). */
export function termsOf(text: string): string[] {
  const terms: string[] = [];
  for (const [token] of text.matchAll(TOKEN)) {
    if (token.length > MAX_TERM_LENGTH) continue;
    const parts = splitIdentifier(token);
    const whole = wholeName(token);
    if (whole !== undefined && (parts.length !== 1 || parts[0] !== whole)) terms.push(whole);
    terms.push(...parts);
  }
  return terms;
}

/**
 * The identifier itself, lowercased, `$` and edge underscores dropped (`__init__` -> `init`).
 * A dashed token counts as one name only when every piece starts with a letter: `max-width` is a
 * name, `i-1` is arithmetic.
 */
function wholeName(token: string): string | undefined {
  if (token.includes('-') && !token.split('-').every((piece) => /^[\p{L}_$]/u.test(piece))) return undefined;
  const whole = token
    .replaceAll('$', '')
    .replace(/^_+|_+$/g, '')
    .toLowerCase();
  return whole === '' ? undefined : whole;
}

/** `services/rag/chunking/code-chunker.ts` -> services rag chunking code-chunker code chunker ts */
export function pathTerms(path: string): string[] {
  return path.split('/').flatMap(termsOf);
}

/**
 * The one string a chunk contributes to the full-text index: symbol and path first (they name the
 * chunk), then every term of the content.
 */
export function searchText(chunk: { content: string; symbol?: string }, path: string): string {
  const terms = [...(chunk.symbol ? termsOf(chunk.symbol) : []), ...pathTerms(path), ...termsOf(chunk.content)];
  return terms.join(' ');
}
