import type { Caller } from '../../premium/caller.ts';
import type { RagDeps } from '../../rag/app/deps.ts';
import type { Retrieval, SearchHit } from '../../rag/retrieval.ts';
import type { CodeLink, ElementClue } from '../../vision/analysis/types.ts';
import type { CodeLinker, CodeSearch } from '../../vision/app/code-links.ts';
import { codeCollection } from '../app/code-collection.ts';

/**
 * Which source files most likely render a page element: the vision findings' `code`. Exact tokens
 * first: a test id, id, name, class, label or literal text of the element written in a file is
 * strong evidence, worth less the more files share it (`btn` is everywhere, `add-to-cart` in one
 * place). Semantic retrieval over all the clues together only ranks among the rest: its whole weight
 * is under one specific token's.
 */

/** Weight of one exact token found in exactly one file, by what the token is. */
const WEIGHTS = { testId: 4, id: 3, name: 2, ariaLabel: 2, alt: 2, src: 2, text: 2, class: 1.5 } as const;
type TokenKind = keyof typeof WEIGHTS;
/** The best semantic hit's weight; the k-th gets SEMANTIC / k. */
const SEMANTIC = 1;
const SEMANTIC_HITS = 10;
/** Chunks read per exact token: a token in more places than this says little anyway. */
const LOOKUP_LIMIT = 20;
/** Literal text shorter than this is a word ("OK", "?"), longer is rarely one literal in the code. */
const TEXT_CHARS = { min: 3, max: 60 } as const;

/** What a token found only inside a path or a longer name is worth, against one written as itself. */
const INSIDE_SOMETHING = 0.25;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The token written as itself: a string literal or one word of it (`'product-photo'`, `'btn btn-primary'`),
 * an attribute value (`id=clipped`), or an element's text (`>Add to cart<`).
 */
const literalOf = (token: string): RegExp => new RegExp(`(^|[\\s'"\`=>])${escapeRegExp(token)}($|[\\s'"\`<])`, 'm');

export interface ElementToken {
  kind: TokenKind;
  value: string;
}

/** The exact tokens worth looking up for an element. */
export function elementTokens(clue: ElementClue): ElementToken[] {
  const tokens: ElementToken[] = [];
  const add = (kind: TokenKind, value: string) => {
    const v = value.trim();
    if (v !== '' && !tokens.some((t) => t.value === v)) tokens.push({ kind, value: v });
  };
  add('testId', clue.testId);
  add('id', clue.id);
  add('name', clue.name);
  add('ariaLabel', clue.ariaLabel);
  add('alt', clue.alt);
  // The file name of an image (`hero.png`, not a data: URL or a whole path), as code writes it.
  if (clue.src && !clue.src.startsWith('data:')) add('src', clue.src.split(/[?#]/)[0]!.split('/').at(-1) ?? '');
  if (clue.text.length >= TEXT_CHARS.min && clue.text.length <= TEXT_CHARS.max) add('text', clue.text);
  for (const c of clue.classes) add('class', c);
  return tokens;
}

/** All the element's words, for semantic retrieval. */
export const semanticQuery = (clue: ElementClue): string =>
  [clue.tag, clue.role, clue.ariaLabel, clue.text, clue.testId, clue.id, clue.name, clue.alt, ...clue.classes]
    .filter((s) => s !== '')
    .join(' ')
    .slice(0, 500);

interface FileScore {
  score: number;
  /** The chunk of the file with the most evidence, for the lines. */
  best: { hit: SearchHit; score: number };
}

function credit(files: Map<string, FileScore>, hit: SearchHit, amount: number, chunkScores: Map<string, number>) {
  const chunk = (chunkScores.get(hit.id) ?? 0) + amount;
  chunkScores.set(hit.id, chunk);
  const file = files.get(hit.metadata.file);
  if (!file) files.set(hit.metadata.file, { score: amount, best: { hit, score: chunk } });
  else {
    file.score += amount;
    if (chunk > file.best.score) file.best = { hit, score: chunk };
  }
}

/**
 * An element's ranking over one collection. `lookup` answers the chunks holding a token as a whole
 * word (cached by the caller across an analysis's elements); `search` the semantic hits.
 */
export async function rankFiles(
  clue: ElementClue,
  limit: number,
  find: {
    lookup(token: string): Promise<SearchHit[]>;
    search(query: string): Promise<SearchHit[]>;
  },
): Promise<CodeLink[]> {
  const files = new Map<string, FileScore>();
  const chunkScores = new Map<string, number>();
  for (const token of elementTokens(clue)) {
    const hits = await find.lookup(token.value);
    const inFiles = new Set(hits.map((h) => h.metadata.file));
    if (inFiles.size === 0) continue;
    const literal = literalOf(token.value);
    // The token's weight is shared by the files that hold it, then by each file's chunks; a file that
    // only holds it inside a longer word or path (`./components/product-photo.js`) gets a fraction.
    const perFile = WEIGHTS[token.kind] / inFiles.size;
    for (const file of inFiles) {
      const chunks = hits.filter((h) => h.metadata.file === file);
      const strength = chunks.some((h) => literal.test(h.content)) ? 1 : INSIDE_SOMETHING;
      for (const hit of chunks) credit(files, hit, (perFile * strength) / chunks.length, chunkScores);
    }
  }
  const query = semanticQuery(clue);
  if (query !== '') {
    const hits = await find.search(query);
    for (const [k, hit] of hits.slice(0, SEMANTIC_HITS).entries()) credit(files, hit, SEMANTIC / (k + 1), chunkScores);
  }
  const total = [...files.values()].reduce((sum, f) => sum + f.score, 0);
  return [...files.entries()]
    .sort((a, b) => b[1].score - a[1].score || a[0].localeCompare(b[0]))
    .slice(0, limit)
    .map(([file, f]) => ({
      file,
      startLine: f.best.hit.metadata.startLine,
      endLine: f.best.hit.metadata.endLine,
      score: Math.round((f.score / total) * 1000) / 1000,
    }));
}

/** One collection's search for one analysis, with the token lookups shared between its elements. */
export function collectionSearch(retrieval: Retrieval, collectionId: string, collectionName: string, tenant: string): CodeSearch {
  const lookups = new Map<string, Promise<SearchHit[]>>();
  const lookup = (token: string) => {
    let hits = lookups.get(token);
    if (!hits) {
      hits = retrieval.lookup(collectionId, token, LOOKUP_LIMIT).then((r) => [...r.definitions, ...r.mentions]);
      lookups.set(token, hits);
    }
    return hits;
  };
  const search = async (query: string) => (await retrieval.search(collectionId, query, SEMANTIC_HITS, tenant)).hits;
  return { collectionName, find: (clue, limit) => rankFiles(clue, limit, { lookup, search }) };
}

/**
 * The vision analyses' code linker over the caller's own collections (the same choice as the
 * integration operations that can go on without code: `codeCollection`'s `optional`), never another
 * customer's: the collection is found by the caller's customer id.
 */
export function elementCodeLinker(rag: Pick<RagDeps, 'db' | 'config' | 'retrieval'>): CodeLinker {
  return {
    async open(caller: Caller, collectionName: string | undefined) {
      const source = await codeCollection(rag, caller, collectionName, 'optional', '');
      if (!source.collection) return { why: source.why };
      const { collectionId, collectionName: name } = source.collection;
      return collectionSearch(rag.retrieval, collectionId, name, caller.customerId);
    },
  };
}
