/**
 * The evaluation set (a JSON file in this folder): queries over one package's source, each with the
 * line ranges that answer it, and the checks that keep it honest: every answer exists, and a query
 * marked conceptual shares no term with the symbols of the chunks that answer it.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Chunk } from '../../services/rag/chunking/chunk.ts';
import { chunkFile } from '../../services/rag/chunking/chunker.ts';
import { pathTerms, termsOf } from '../../services/rag/chunking/identifiers.ts';
import { parseCorpus } from './corpus.ts';
import type { CorpusSpec } from './corpus.ts';
import { relevant } from './metrics.ts';

export interface Answer {
  readonly file: string;
  /** 1-based, inclusive */
  readonly lines: readonly [number, number];
  /** for people: what is there */
  readonly what?: string;
}

export interface EvalQuery {
  readonly id: string;
  readonly query: string;
  readonly conceptual: boolean;
  readonly answers: readonly Answer[];
}

export interface EvalSet {
  /** a held-out set is run only to report, never to tune against */
  readonly heldOut?: boolean;
  /** how reports name the set when its package and version do not tell it from another set */
  readonly name?: string;
  /** the package whose source is searched (`corpus.ts`: npm, a Go module or a Maven sources jar) */
  readonly corpus: CorpusSpec;
  readonly queries: readonly EvalQuery[];
}

/** The set's name in reports. */
export function setName(set: EvalSet): string {
  return set.name ?? `${set.corpus.package} ${set.corpus.version}`;
}

export function loadEvalSet(file: string): EvalSet {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as EvalSet;
  if (!Array.isArray(parsed.queries)) throw new Error(`${file}: not an evaluation set`);
  parseCorpus(parsed.corpus, file);
  const ids = new Set<string>();
  for (const q of parsed.queries) {
    if (ids.has(q.id)) throw new Error(`${file}: query id ${q.id} twice`);
    ids.add(q.id);
    if (!q.query || q.answers.length === 0) throw new Error(`${file}: ${q.id} has no query or no answer`);
  }
  return parsed;
}

/**
 * Crude English stemming, only for the conceptual check: `retries` ~ `retry`, `backed` ~ `back`,
 * `sockets` ~ `socket`. It makes the check stricter than exact matching, never looser.
 */
export function stem(term: string): string {
  if (term.length <= 3) return term;
  for (const [suffix, replacement] of [
    ['ies', 'y'],
    ['ied', 'y'],
    ['ing', ''],
    ['ers', ''],
    ['er', ''],
    ['ed', ''],
    ['es', ''],
    ['s', ''],
  ] as const) {
    if (term.endsWith(suffix) && term.length - suffix.length >= 3) return term.slice(0, -suffix.length) + replacement;
  }
  return term;
}

export interface ConceptualCheck {
  readonly id: string;
  /** terms shared with the symbols of the answering chunks (must be empty for a conceptual query) */
  readonly sharedWithSymbols: string[];
  /** terms shared with the answer files' paths (reported, not required to be empty) */
  readonly sharedWithPaths: string[];
  /** answers no chunk of the chunker can be relevant to (a chunking problem, reported) */
  readonly unreachable: Answer[];
}

/** Checks every query against the chunks of its answer files (chunked from `root`). */
export async function checkEvalSet(set: EvalSet, root: string): Promise<ConceptualCheck[]> {
  const chunksOf = new Map<string, Chunk[]>();
  const results: ConceptualCheck[] = [];
  for (const q of set.queries) {
    const queryStems = new Set(termsOf(q.query).map(stem));
    const symbolTerms = new Set<string>();
    const pathTermSet = new Set<string>();
    const unreachable: Answer[] = [];
    for (const answer of q.answers) {
      let chunks = chunksOf.get(answer.file);
      if (!chunks) {
        const text = readFileSync(join(root, answer.file), 'utf8');
        const lineCount = text.split('\n').length;
        if (answer.lines[0] < 1 || answer.lines[1] > lineCount || answer.lines[0] > answer.lines[1]) {
          throw new Error(`${q.id}: ${answer.file} has ${lineCount} lines, the answer says ${answer.lines.join('-')}`);
        }
        chunks = await chunkFile(answer.file, text);
        chunksOf.set(answer.file, chunks);
      }
      const answering = chunks.filter((c) => relevant({ file: answer.file, startLine: c.startLine, endLine: c.endLine }, answer));
      if (answering.length === 0) unreachable.push(answer);
      for (const c of answering) for (const t of termsOf(c.symbol ?? '')) symbolTerms.add(stem(t));
      for (const t of pathTerms(answer.file.replace(/\.[^./]+$/, ''))) pathTermSet.add(stem(t));
    }
    results.push({
      id: q.id,
      sharedWithSymbols: [...queryStems].filter((t) => symbolTerms.has(t)),
      sharedWithPaths: [...queryStems].filter((t) => pathTermSet.has(t)),
      unreachable,
    });
  }
  return results;
}
