/**
 * Code retrieval quality and speed over a real package's source (the evaluation set in
 * bench/rag-eval/, see its README): indexes the source from scratch, scores BM25, vectors and the
 * hybrid on every query, re-indexes after one changed file, and measures query latency.
 *
 *   npm run bench:rag
 *
 * Env:
 *   BENCH_RAG_EVAL         evaluation set (default bench/rag-eval/mongodb-7.0.0.json)
 *   EMBEDDING_MODEL_DIR    model folder (default: the provisioned all-MiniLM-L6-v2)
 *   BENCH_RAG_CLIENTS      concurrent clients for the latency run (default 10)
 *   BENCH_RAG_CALLS        calls per client (default 60)
 *   BENCH_RAG_VERBOSE=1    print each query's first relevant rank per method
 *   BENCH_RAG_EMBED_CACHE=1  reuse document vectors from ~/.cache/svc/bench-rag (iteration only:
 *                          the indexing time is then not the real one, and the run says so)
 */

import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { OnnxEmbedder } from '../services/rag/embedding/embedder.ts';
import type { Embedder } from '../services/rag/embedding/embedder.ts';
import { defaultModelDir } from '../services/rag/embedding/model-folder.ts';
import { QueryBatcher } from '../services/rag/index-store/query-batcher.ts';
import { IndexStore } from '../services/rag/index-store/store.ts';
import type { SearchHit } from '../services/rag/index-store/types.ts';
import { VectorMatrix } from '../services/rag/index-store/vector-matrix.ts';
import { embeddingIdentity } from '../services/rag/indexing/embedding-text.ts';
import { indexCollection } from '../services/rag/indexing/index-collection.ts';
import { walkProject } from '../services/rag/sources/walk.ts';
import { CachingEmbedder } from './rag-eval/embedding-cache.ts';
import { checkEvalSet, loadEvalSet } from './rag-eval/eval-set.ts';
import type { EvalQuery } from './rag-eval/eval-set.ts';
import { LruCache } from '../services/rag/lru-cache.ts';
import { firstRelevantRank, percentile, score } from './rag-eval/metrics.ts';
import type { RangeHit } from './rag-eval/metrics.ts';
import { runMain } from './run-main.ts';

const EVAL_FILE = process.env.BENCH_RAG_EVAL ?? 'bench/rag-eval/mongodb-7.0.0.json';
const CLIENTS = Number(process.env.BENCH_RAG_CLIENTS ?? 10);
const CALLS = Number(process.env.BENCH_RAG_CALLS ?? 60);
const VERBOSE = process.env.BENCH_RAG_VERBOSE === '1';
const EMBED_CACHE = process.env.BENCH_RAG_EMBED_CACHE === '1';
const K = 10;

type Method = 'bm25' | 'vector' | 'plain rrf' | 'hybrid';
const METHODS: readonly Method[] = ['bm25', 'vector', 'plain rrf', 'hybrid'];

function rangeHits(hits: readonly SearchHit[]): RangeHit[] {
  return hits.map((h) => ({ file: h.metadata.file, startLine: h.metadata.startLine, endLine: h.metadata.endLine }));
}

function fmt(n: number, digits = 2): string {
  return n.toFixed(digits);
}

async function main(): Promise<void> {
  const set = loadEvalSet(EVAL_FILE);
  const corpusRoot = join(process.cwd(), set.corpus.root);
  const installed = JSON.parse(readFileSync(join(process.cwd(), 'node_modules', set.corpus.package, 'package.json'), 'utf8')) as {
    version: string;
  };
  if (installed.version !== set.corpus.version) {
    throw new Error(`the set was written for ${set.corpus.package} ${set.corpus.version}, node_modules has ${installed.version}`);
  }

  // 1. The set itself: answers exist, conceptual queries share no term with the answers' symbols.
  const checks = await checkEvalSet(set, corpusRoot);
  const byId = new Map(checks.map((c) => [c.id, c]));
  const conceptual = set.queries.filter((q) => q.conceptual);
  const violations = conceptual.filter((q) => (byId.get(q.id)?.sharedWithSymbols.length ?? 0) > 0);
  if (violations.length > 0) {
    throw new Error(
      `queries marked conceptual share terms with their answers' symbols: ${violations.map((q) => `${q.id} (${byId.get(q.id)?.sharedWithSymbols.join(', ')})`).join('; ')}`,
    );
  }
  const pathFree = conceptual.filter((q) => (byId.get(q.id)?.sharedWithPaths.length ?? 0) === 0).length;
  for (const c of checks)
    for (const a of c.unreachable) console.error(`warning: ${c.id} ${a.file}:${a.lines.join('-')} is covered by no chunk of its size`);
  console.log(
    `evaluation set  ${EVAL_FILE}: ${set.queries.length} queries over ${set.corpus.package} ${set.corpus.version} (${set.corpus.root})`,
  );
  console.log(
    `                ${conceptual.length} conceptual (no term shared with the answers' symbols, checked), ${pathFree} of them share none with the answer's path either`,
  );

  // 2. Index from scratch (a copy, so one file can be changed later).
  const work = mkdtempSync(join(tmpdir(), 'bench-rag-'));
  try {
    const source = join(work, 'src');
    cpSync(corpusRoot, source, { recursive: true });
    const onnx = await OnnxEmbedder.load(process.env.EMBEDDING_MODEL_DIR || defaultModelDir(), { intraOpThreads: 2 });
    const cache = EMBED_CACHE
      ? new CachingEmbedder(onnx, join(homedir(), '.cache', 'svc', 'bench-rag', `${onnx.folder.manifest.name}.vectors`))
      : undefined;
    const embedder: Embedder = cache ?? onnx;
    const store = IndexStore.open(join(work, 'index.db'), { model: embeddingIdentity(onnx.folder.manifest.name, onnx.dimensions) });
    try {
      let lastDraw = 0;
      const full = await indexCollection({
        store,
        embedder,
        files: walkProject(source),
        onProgress: (p) => {
          if (!process.stderr.isTTY || performance.now() - lastDraw < 500) return;
          lastDraw = performance.now();
          process.stderr.write(`\r  indexing ${p.filesDone}/${p.filesTotal} files, ${p.chunks} chunks`);
        },
      });
      if (process.stderr.isTTY) process.stderr.write('\r\u001b[K');
      cache?.save();
      const counts = store.counts();
      console.log(
        `full index      ${full.filesIndexed} files, ${counts.chunks} chunks, ${full.filesSkipped} skipped, ${fmt(full.durationMs / 1000, 1)} s ` +
          `(${fmt((counts.chunks * 1000) / full.durationMs, 1)} chunks/s)${cache ? ` [embedding cache: ${cache.hits} hits, ${cache.misses} embedded: NOT a from-scratch time]` : ''}`,
      );

      // 3. Quality.
      const ranks = Object.fromEntries(METHODS.map((m) => [m, { line: [], file: [] }])) as unknown as Ranks;
      const queryVectors = new Map<string, Float32Array>();
      for (const q of set.queries) {
        const [vector] = await onnx.embed([q.query], 'query');
        queryVectors.set(q.id, vector as Float32Array);
        const results: Record<Method, SearchHit[]> = {
          bm25: store.hits(store.searchBm25(q.query, K)),
          vector: store.hits(store.searchVector(vector as Float32Array, K)),
          // RRF of BM25 and vectors alone: no query profile, no named list (the reference)
          'plain rrf': store.search(q.query, vector as Float32Array, K, { plainTextBm25Weight: 1, namedWeight: 0 }),
          hybrid: store.search(q.query, vector as Float32Array, K),
        };
        for (const m of METHODS) {
          ranks[m].line.push(firstRelevantRank(rangeHits(results[m]), q.answers));
          ranks[m].file.push(firstRelevantRank(rangeHits(results[m]), q.answers, true));
        }
        if (VERBOSE) printQuery(q, ranks, results.hybrid);
      }
      const recall = printQuality(set.queries, ranks);

      // 4. One changed file.
      const changed = 'sdam/server_selection.ts';
      const path = join(source, changed);
      writeFileSync(
        path,
        `${readFileSync(path, 'utf8')}\n/** Picks the first server, for tests. */\nexport function firstServer<T>(servers: T[]): T | undefined {\n  return servers[0];\n}\n`,
      );
      const incremental = await indexCollection({ store, embedder: onnx, files: walkProject(source) });
      if (incremental.filesIndexed !== 1 || incremental.filesUnchanged !== full.filesIndexed - 1) {
        throw new Error(`one changed file re-indexed ${incremental.filesIndexed} files (${incremental.filesUnchanged} unchanged)`);
      }
      const nothing = await indexCollection({ store, embedder: onnx, files: walkProject(source) });
      console.log(
        `re-index       one changed file: ${fmt(incremental.durationMs, 0)} ms (1 file, ${incremental.chunks} chunks re-embedded, ${incremental.filesUnchanged} unchanged); ` +
          `nothing changed: ${fmt(nothing.durationMs, 0)} ms`,
      );

      // 5. Latency.
      const queryThreads = Number(process.env.BENCH_RAG_QUERY_THREADS ?? 2);
      const queryEmbedder = queryThreads === 2 ? onnx : await OnnxEmbedder.load(onnx.folder.dir, { intraOpThreads: queryThreads });
      const times = await latency(
        store,
        queryEmbedder,
        set.queries.map((q) => q.query),
      );
      if (queryEmbedder !== onnx) await (queryEmbedder as OnnxEmbedder).close();
      vectorScan(onnx.dimensions);

      const verdict = (ok: boolean) => (ok ? 'met   ' : 'MISSED');
      const all = recall.all ?? { line: 0, file: 0 };
      const concept = recall.conceptual ?? { line: 0, file: 0 };
      console.log('');
      console.log('targets');
      console.log(
        `  ${verdict(all.file >= 0.9)} hybrid recall@5 >= 0.9: file-level ${fmt(all.file)}; ${verdict(all.line >= 0.9).trim()} at line level (${fmt(all.line)})`,
      );
      console.log(
        `  ${verdict(concept.file >= 0.8)} conceptual hybrid recall@5 >= 0.8: file-level ${fmt(concept.file)}; ${verdict(concept.line >= 0.8).trim()} at line level (${fmt(concept.line)})`,
      );
      console.log(`  ${verdict(incremental.durationMs < 2000)} one changed file re-indexed in < 2 s: ${fmt(incremental.durationMs, 0)} ms`);
      console.log(`  ${verdict(times.p50 < 50)} query p50 < 50 ms uncached, ${CLIENTS} clients: ${fmt(times.p50)} ms`);
      console.log(`  ${verdict(times.p99 < 200)} query p99 < 200 ms uncached, ${CLIENTS} clients: ${fmt(times.p99)} ms`);
      console.log(`  ${verdict(times.cachedP99 < 5)} cached p99 < 5 ms: ${fmt(times.cachedP99)} ms`);
    } finally {
      store.close();
      await onnx.close();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

type Ranks = Record<Method, { line: Array<number | undefined>; file: Array<number | undefined> }>;

function printQuery(q: EvalQuery, ranks: Ranks, hybrid: readonly SearchHit[]): void {
  const last = (m: Method) => ranks[m].line.at(-1) ?? '-';
  const top = hybrid[0]
    ? `${hybrid[0].metadata.file}:${hybrid[0].metadata.startLine}-${hybrid[0].metadata.endLine} ${hybrid[0].metadata.symbol ?? ''}`
    : '';
  console.log(
    `  ${q.id} ${q.conceptual ? 'C' : 'L'} bm25 ${last('bm25')} vector ${last('vector')} hybrid ${last('hybrid')}  ${q.query}  -> ${top}`,
  );
}

function printQuality(queries: readonly EvalQuery[], ranks: Ranks): Record<string, { line: number; file: number }> {
  const hybridRecall: Record<string, { line: number; file: number }> = {};
  const subsets: Array<[string, (q: EvalQuery) => boolean]> = [
    ['all', () => true],
    ['conceptual', (q) => q.conceptual],
    ['identifier', (q) => !q.conceptual],
  ];
  console.log('');
  console.log('quality (line-level: a hit counts when a third of it lies in an answer range; file-level in brackets)');
  console.log('  subset       n   method      recall@5        MRR');
  for (const [name, keep] of subsets) {
    const indexes = queries.map((q, i) => (keep(q) ? i : -1)).filter((i) => i >= 0);
    for (const m of METHODS) {
      const line = score(indexes.map((i) => ranks[m].line[i]));
      const file = score(indexes.map((i) => ranks[m].file[i]));
      console.log(
        `  ${name.padEnd(11)} ${String(indexes.length).padStart(2)}   ${m.padEnd(10)}  ${fmt(line.recallAt5)} [${fmt(file.recallAt5)}]   ${fmt(line.mrr)} [${fmt(file.mrr)}]`,
      );
      if (m === 'hybrid') hybridRecall[name] = { line: line.recallAt5, file: file.recallAt5 };
    }
  }
  console.log('  (plain rrf: BM25 and vectors fused with equal weights and no named list, for reference)');
  console.log('');
  return hybridRecall;
}

/**
 * Uncached: each call embeds its query and runs the hybrid search, as the query path does without
 * a cache hit; CLIENTS async loops call at once, so calls queue on the one embedder and the one
 * JavaScript thread as they would in the service. Cached: the same clients look the answers up in
 * an LRU keyed by (generation, query, k).
 */
interface Latencies {
  readonly p50: number;
  readonly p99: number;
  readonly cachedP99: number;
}

async function latency(store: IndexStore, embedder: Embedder, queries: readonly string[]): Promise<Latencies> {
  const query = async (text: string) => {
    const [vector] = await embedder.embed([text], 'query');
    return store.search(text, vector as Float32Array, 5);
  };
  await query('warm up the vectors in memory');

  const sequential: number[] = [];
  for (const text of queries) {
    const started = performance.now();
    await query(text);
    sequential.push(performance.now() - started);
  }

  const concurrent = async (embedderForQueries: Embedder) => {
    const samples: number[] = [];
    let next = 0;
    const wall = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let i = 0; i < CALLS; i++) {
          const text = queries[next++ % queries.length] as string;
          const started = performance.now();
          const [vector] = await embedderForQueries.embed([text], 'query');
          store.search(text, vector as Float32Array, 5);
          samples.push(performance.now() - started);
        }
      }),
    );
    return { samples, perSecond: (samples.length * 1000) / (performance.now() - wall) };
  };
  const unbatched = await concurrent(embedder);
  const batched = await concurrent(new QueryBatcher(embedder));

  const parts = { embed: [] as number[], bm25: [] as number[], vector: [] as number[], named: [] as number[], search: [] as number[] };
  for (const text of queries) {
    let t = performance.now();
    const [vector] = await embedder.embed([text], 'query');
    parts.embed.push(performance.now() - t);
    t = performance.now();
    store.searchBm25(text, 50);
    parts.bm25.push(performance.now() - t);
    t = performance.now();
    store.searchVector(vector as Float32Array, 50);
    parts.vector.push(performance.now() - t);
    t = performance.now();
    store.searchNamed(text, 10);
    parts.named.push(performance.now() - t);
    t = performance.now();
    store.search(text, vector as Float32Array, 5);
    parts.search.push(performance.now() - t);
  }

  // Keyed on (store generation, query, k), as the query path is, so the cached latency is that of a real lookup.
  const cacheKey = (generation: number, query: string, k: number) => `${generation}\u0000${k}\u0000${query}`;
  const cache = new LruCache<string, SearchHit[]>(1000);
  for (const text of queries) cache.set(cacheKey(store.generation, text, 5), await query(text));
  const cached: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      for (let i = 0; i < CALLS * 10; i++) {
        const text = queries[next++ % queries.length] as string;
        const started = performance.now();
        const hit = await Promise.resolve(cache.get(cacheKey(store.generation, text, 5)));
        cached.push(performance.now() - started);
        if (!hit) throw new Error('the warmed cache missed');
      }
    }),
  );

  const row = (samples: readonly number[]) => `p50 ${fmt(percentile(samples, 50))} ms  p99 ${fmt(percentile(samples, 99))} ms`;
  console.log(`latency, one client     embed + hybrid search, ${sequential.length} calls: ${row(sequential)}`);
  console.log(
    `latency, ${CLIENTS} clients     embed + hybrid search, QueryBatcher, ${batched.samples.length} calls: ${row(batched.samples)}  (${fmt(batched.perSecond, 0)} queries/s)`,
  );
  console.log(`  without the batcher    ${row(unbatched.samples)}  (${fmt(unbatched.perSecond, 0)} queries/s)`);
  console.log(`  parts, one at a time  embed ${row(parts.embed)} | whole search ${row(parts.search)}`);
  console.log(`                        bm25 top 50 ${row(parts.bm25)} | vectors top 50 ${row(parts.vector)} | named ${row(parts.named)}`);
  console.log(
    `latency, cached         LRU lookup keyed (generation, query, k), ${CLIENTS} clients, ${cached.length} calls: ${row(cached)}`,
  );
  return { p50: percentile(batched.samples, 50), p99: percentile(batched.samples, 99), cachedP99: percentile(cached, 99) };
}

/** The exact scan at sizes beyond the corpus: random unit vectors, 10 queries each. */
function vectorScan(dimensions: number): void {
  const line: string[] = [];
  for (const rows of [10_000, 50_000, 100_000]) {
    const data = new Float32Array(rows * dimensions);
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648 - 0.5;
    for (let r = 0; r < rows; r++) {
      let norm = 0;
      for (let j = 0; j < dimensions; j++) norm += (data[r * dimensions + j] = random()) ** 2;
      norm = Math.sqrt(norm);
      for (let j = 0; j < dimensions; j++) data[r * dimensions + j] = (data[r * dimensions + j] as number) / norm;
    }
    const matrix = new VectorMatrix(dimensions, data, new Int32Array(rows), new Array<string>(rows).fill(''), new Int32Array(rows));
    const times: number[] = [];
    for (let i = 0; i < 10; i++) {
      const q = data.slice(i * dimensions, (i + 1) * dimensions);
      const started = performance.now();
      matrix.nearest(q, 50);
      times.push(performance.now() - started);
    }
    line.push(`${rows / 1000}k: p50 ${fmt(percentile(times, 50), 1)} ms`);
  }
  console.log(`exact vector scan (${dimensions} dims, top 50, random data)  ${line.join(', ')}`);
}

await runMain(main, (line) => console.error(line));
