/**
 * What the fused list is re-ordered by before the best k are taken: what kind of file a hit is in,
 * and whether a near-copy of its file is already ranked above it.
 *
 * A whole package indexed as it ships holds prose (changelogs, guides, the README) and type
 * declarations that repeat every name of the code, in the words of the question, so both lists rank
 * them high; the question almost always asks for the code that does the thing. A package that keeps
 * versioned copies of one file (`v0/request.js` … `v11/request.js`) fills the top five with one
 * answer. Both were the misses on code nobody tuned on (issue 39); bench/rag-eval/README.md has the
 * figures the weights were chosen by.
 */

import { termsOf } from '../chunking/identifiers.ts';

export type FileKind = 'code' | 'test' | 'declaration' | 'prose';

/** Multipliers of a hit's fused score by the kind of its file; code counts fully. */
export type KindWeights = Readonly<Record<FileKind, number>>;

export const KIND_WEIGHTS: KindWeights = { code: 1, test: 0.7, declaration: 0.5, prose: 0.5 };

/**
 * The second file of one template (`v#/request.js`) scores this share, the third its square, and so
 * on; chunks of one file are not near-copies of each other and are left alone. Off (1) by default:
 * at 0.5 it cost 0.01-0.02 of file recall@5 on the development sets, none of which holds a versioned
 * family, and no set that does was there to choose it on (bench/rag-eval/README.md).
 */
export const NEAR_COPY_DECAY = 1;

const PROSE_EXTENSION = /\.(?:md|mdx|markdown|rst|txt|adoc|asciidoc|org)$/i;
/** `LICENSE`, `LICENSE-MIT`, `HISTORY.txt`; never `history.ts`, which is code about history. */
const PROSE_NAME =
  /^(?:changelog|changes|history|news|contributing|code_of_conduct|security|license|licence|notice|authors|readme|upgrading|migrating|migration)(?:[-_][a-z0-9]+)?(?:\.(?:md|markdown|rst|txt|adoc))?$/i;
const DECLARATION = /\.d\.[cm]?ts$|\.pyi$/i;
const TEST_SEGMENT = /^(?:tests?|__tests__|spec|specs|testing|testdata|fixtures?)$/i;
const TEST_NAME =
  /(?:[._-](?:test|spec)s?\.[a-z0-9]+$)|(?:^test_[^/]*\.py$)|(?:_test\.(?:go|py|rs)$)|(?:(?:Test|Tests|IT)\.(?:java|kt|scala)$)/;

export function fileKindOf(path: string): FileKind {
  const segments = path.split('/');
  const name = segments.at(-1) ?? path;
  if (DECLARATION.test(name)) return 'declaration';
  if (PROSE_EXTENSION.test(name) || PROSE_NAME.test(name)) return 'prose';
  if (TEST_NAME.test(name) || segments.slice(0, -1).some((s) => TEST_SEGMENT.test(s))) return 'test';
  return 'code';
}

/** Words by which a question asks for a kind itself: such a question gets that kind at full weight. */
const ASKING: ReadonlyArray<[FileKind, ReadonlySet<string>]> = [
  ['test', new Set(['test', 'tests', 'tested', 'testing', 'spec', 'specs', 'fixture', 'fixtures', 'mock', 'mocks'])],
  [
    'prose',
    new Set([
      'changelog',
      'readme',
      'doc',
      'docs',
      'documentation',
      'documented',
      'guide',
      'release',
      'released',
      'license',
      'contributing',
      'history',
      'migration',
      'upgrade',
      'upgrading',
      // Setting a thing up is what guides are for: "which environment variables set the port".
      'environment',
      'variable',
      'variables',
      'configure',
      'configuring',
      'setup',
      'install',
      'installing',
      'installation',
    ]),
  ],
  ['declaration', new Set(['typing', 'typings', 'declaration', 'declarations', 'declared', 'dts', 'stub', 'stubs'])],
];

/** The kind weights for this query: those the query asks for by name count fully. */
export function weightsFor(query: string, weights: KindWeights = KIND_WEIGHTS): KindWeights {
  const terms = new Set(termsOf(query));
  let adjusted: Record<FileKind, number> | undefined;
  for (const [kind, words] of ASKING) {
    if ([...words].some((w) => terms.has(w))) {
      adjusted ??= { ...weights };
      adjusted[kind] = 1;
    }
  }
  return adjusted ?? weights;
}

/** A path with its digit runs made one mark: `requests/fetch/v11/request.js` -> `requests/fetch/v#/request.js`. */
export function pathTemplate(path: string): string {
  return path.replace(/\d+/g, '#');
}

export interface Scored<K> {
  readonly item: K;
  readonly score: number;
}

export interface RerankOptions {
  readonly weights?: KindWeights;
  readonly nearCopyDecay?: number;
}

/**
 * The best `k` of a fused list (best first) after the file priors: each score times its file kind's
 * weight for this query, then, greedily from the top, times `nearCopyDecay` for every other file of
 * its template already taken. Ties keep the fused order, so the result depends only on the inputs.
 */
export function rerankByFile<K>(
  fused: ReadonlyArray<Scored<K>>,
  pathOf: (item: K) => string | undefined,
  query: string,
  k: number,
  options: RerankOptions = {},
): Array<Scored<K>> {
  const weights = weightsFor(query, options.weights ?? KIND_WEIGHTS);
  const decay = options.nearCopyDecay ?? NEAR_COPY_DECAY;
  const pending = fused.map((f, order) => {
    const path = pathOf(f.item) ?? '';
    return { item: f.item, order, path, template: pathTemplate(path), score: f.score * weights[fileKindOf(path)] };
  });
  // Without the decay no pick changes another's score: one stable sort, not the greedy pass.
  if (decay === 1) {
    return pending
      .sort((a, b) => b.score - a.score || a.order - b.order)
      .slice(0, Math.max(0, k))
      .map(({ item, score }) => ({ item, score }));
  }
  /** per template, the distinct files already taken */
  const taken = new Map<string, Set<string>>();
  const out: Array<Scored<K>> = [];
  const effective = (p: (typeof pending)[number]) => {
    const files = taken.get(p.template);
    const others = files ? files.size - (files.has(p.path) ? 1 : 0) : 0;
    return others === 0 ? p.score : p.score * decay ** others;
  };
  while (out.length < k && pending.length > 0) {
    let best = 0;
    let bestScore = effective(pending[0] as (typeof pending)[number]);
    for (let i = 1; i < pending.length; i++) {
      const candidate = pending[i] as (typeof pending)[number];
      const s = effective(candidate);
      if (s > bestScore || (s === bestScore && candidate.order < (pending[best] as (typeof pending)[number]).order)) {
        best = i;
        bestScore = s;
      }
    }
    const [chosen] = pending.splice(best, 1) as [(typeof pending)[number]];
    let files = taken.get(chosen.template);
    if (!files) taken.set(chosen.template, (files = new Set()));
    files.add(chosen.path);
    out.push({ item: chosen.item, score: bestScore });
  }
  return out;
}

/** The path of each row id the search lists hold (every fused item is in one of them). */
export function pathsOf(
  ...lists: ReadonlyArray<ReadonlyArray<{ readonly rowId: number; readonly path: string }>>
): (rowId: number) => string | undefined {
  const paths = new Map<number, string>();
  for (const list of lists) for (const r of list) paths.set(r.rowId, r.path);
  return (rowId) => paths.get(rowId);
}

/** The rerank options a search's options ask for. */
export function filePriorOptions(options: { readonly kindWeights?: KindWeights; readonly nearCopyDecay?: number }): RerankOptions {
  return {
    ...(options.kindWeights ? { weights: options.kindWeights } : {}),
    ...(options.nearCopyDecay !== undefined ? { nearCopyDecay: options.nearCopyDecay } : {}),
  };
}
