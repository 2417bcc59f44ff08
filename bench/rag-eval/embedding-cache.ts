/**
 * For iterating on retrieval only (BENCH_RAG_EMBED_CACHE=1): document vectors remembered by the
 * sha256 of the text embedded, in one file under ~/.cache/svc, so a run that changes ranking but
 * not embedding texts skips minutes of embedding. Reported runs index from scratch without it.
 */

import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Embedder, EmbeddingKind } from '../../services/rag/embedding/embedder.ts';

const KEY_BYTES = 32;

export class CachingEmbedder implements Embedder {
  readonly dimensions: number;
  readonly #inner: Embedder;
  readonly #file: string;
  readonly #vectors = new Map<string, Float32Array>();
  hits = 0;
  misses = 0;

  constructor(inner: Embedder, file: string) {
    this.#inner = inner;
    this.#file = file;
    this.dimensions = inner.dimensions;
    let bytes: Buffer | undefined;
    try {
      bytes = readFileSync(file);
    } catch {
      bytes = undefined;
    }
    const record = KEY_BYTES + this.dimensions * 4;
    if (bytes && bytes.byteLength % record === 0) {
      for (let offset = 0; offset < bytes.byteLength; offset += record) {
        const key = bytes.subarray(offset, offset + KEY_BYTES).toString('hex');
        const vector = new Float32Array(this.dimensions);
        new Uint8Array(vector.buffer).set(bytes.subarray(offset + KEY_BYTES, offset + record));
        this.#vectors.set(key, vector);
      }
    }
  }

  async embed(texts: readonly string[], kind: EmbeddingKind): Promise<Float32Array[]> {
    if (kind === 'query') return this.#inner.embed(texts, kind);
    const keys = texts.map((t) => createHash('sha256').update(t).digest('hex'));
    const missing = keys.map((k, i) => (this.#vectors.has(k) ? -1 : i)).filter((i) => i >= 0);
    this.hits += texts.length - missing.length;
    this.misses += missing.length;
    if (missing.length > 0) {
      const fresh = await this.#inner.embed(
        missing.map((i) => texts[i] as string),
        kind,
      );
      for (const [j, i] of missing.entries()) this.#vectors.set(keys[i] as string, fresh[j] as Float32Array);
    }
    return keys.map((k) => this.#vectors.get(k) as Float32Array);
  }

  save(): void {
    const record = KEY_BYTES + this.dimensions * 4;
    const out = Buffer.alloc(this.#vectors.size * record);
    let offset = 0;
    for (const [key, vector] of this.#vectors) {
      Buffer.from(key, 'hex').copy(out, offset);
      Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).copy(out, offset + KEY_BYTES);
      offset += record;
    }
    mkdirSync(dirname(this.#file), { recursive: true });
    writeFileSync(this.#file, out);
  }
}
