import type { CollectionIndex } from './collection-index.ts';
import type { IndexStore } from './store.ts';
import type { ChunkRecord, RankedChunk, SearchOptions } from './types.ts';

/** A SQLite `IndexStore` as a `CollectionIndex`: the same calls, answered at once. */
export function sqliteIndex(store: IndexStore): CollectionIndex {
  return {
    model: store.model,
    generation: async () => store.generation,
    manifest: async () => store.manifest(),
    fileHash: async (path: string) => store.fileHash(path),
    counts: async () => store.counts(),
    fileChunks: async (path: string) => store.fileChunks(path),
    fileVectors: async (path: string) => store.fileVectors(path),
    writeFile: async (file: { path: string; hash: string; size: number }, chunks: readonly ChunkRecord[]) => store.writeFile(file, chunks),
    removeFiles: async (paths: readonly string[]) => store.removeFiles(paths),
    searchBm25: async (query: string, k: number) => store.searchBm25(query, k),
    searchVector: async (vector: Float32Array, k: number) => store.searchVector(vector, k),
    searchNamed: async (query: string, k: number) => store.searchNamed(query, k),
    search: async (query: string, vector: Float32Array, k: number, options?: SearchOptions) => store.search(query, vector, k, options),
    hits: async (ranked: ReadonlyArray<Pick<RankedChunk, 'rowId' | 'score'>>) => store.hits(ranked),
  };
}
