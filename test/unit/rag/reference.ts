import { readFileSync } from 'node:fs';
import type { EmbeddingKind } from '../../../services/rag/embedding/embedder.ts';

/** The fixtures test/fixtures/rag/make-reference.py made with the model's own Python tooling. */

const FIXTURES = new URL('../../fixtures/rag/', import.meta.url);

export interface TokenizerReference {
  readonly maxSequenceLength: number;
  readonly cases: readonly { readonly name: string; readonly text: string; readonly ids: readonly number[] }[];
  /** The part of the model's vocabulary the cases can reach, with the model's ids. */
  readonly vocab: Readonly<Record<string, number>>;
}

export interface EmbeddingReference {
  readonly cases: readonly { readonly kind: EmbeddingKind; readonly text: string; readonly vector: readonly number[] }[];
}

export function tokenizerReference(): TokenizerReference {
  return JSON.parse(readFileSync(new URL('tokenizer-reference.json', FIXTURES), 'utf8')) as TokenizerReference;
}

export function embeddingReference(): EmbeddingReference {
  return JSON.parse(readFileSync(new URL('embedding-reference.json', FIXTURES), 'utf8')) as EmbeddingReference;
}
