/**
 * Code retrieval quality and speed over real packages' source (the evaluation sets in
 * bench/rag-eval/, see its README), on one index engine or both. Per set: chunks and embeds the
 * source once, indexes it from scratch into each engine through the service's engine factory and
 * `CollectionIndex`, scores BM25, vectors and the hybrid on every query (recall@5, recall@10, MRR,
 * nDCG@10 at file and line level, all questions and the conceptual half), re-indexes after one
 * changed file, measures query latency, and prints the engines side by side; then one summary table
 * of every set. A held-out set is marked HELD OUT: it is run only to report. A set's corpus is an
 * installed npm package, a Go module or a Maven sources jar, fetched if need be (rag-eval/corpus.ts).
 *
 *   npm run bench:rag
 *   BENCH_RAG_EVAL=undici-7.29.0,mongodb-7.0.0 npm run bench:rag
 *   BENCH_RAG_ENGINE=both npm run bench:rag
 *
 * Env:
 *   BENCH_RAG_ENGINE       sqlite (default), postgres or both (one process, the same vectors)
 *   RAG_DATABASE_URL       the PostgreSQL (with pgvector) for postgres; unset: the bench starts one as
 *                          the local stack does and removes it at the end
 *   RAG_DATABASE_POOL      connections of the postgres engine's pool (default 10, as the service)
 *   BENCH_RAG_EVAL         evaluation sets: `all` (default: every *.json in bench/rag-eval) or a
 *                          comma-separated list of paths or names (`undici-7.29.0`)
 *   EMBEDDING_MODEL_DIR    model folder (default: the provisioned all-MiniLM-L6-v2)
 *   BENCH_RAG_CLIENTS      concurrent clients for the latency run (default 10)
 *   BENCH_RAG_CALLS        calls per client, per set (default 60)
 *   BENCH_RAG_QUERY_THREADS  intra-op threads of the query embedder (default 1, as the service's query worker)
 *   BENCH_RAG_VERBOSE=1    print each query's first relevant rank per method
 *   BENCH_RAG_EMBED_CACHE=1  reuse document vectors from ~/.cache/svc/bench-rag (iteration only:
 *                          the indexing time is then not the real one, and the run says so)
 */

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { OnnxEmbedder } from '../services/rag/embedding/embedder.ts';
import type { Embedder } from '../services/rag/embedding/embedder.ts';
import { defaultModelDir } from '../services/rag/embedding/model-folder.ts';
import type { CollectionIndex } from '../services/rag/index-store/collection-index.ts';
import { QueryBatcher } from '../services/rag/index-store/query-batcher.ts';
import type { SearchHit } from '../services/rag/index-store/types.ts';
import { VectorMatrix } from '../services/rag/index-store/vector-matrix.ts';
import { DEFAULT_RECIPE, embeddingIdentity } from '../services/rag/indexing/embedding-text.ts';
import { DEFAULT_BATCH_SIZE, indexCollection, preparedHere } from '../services/rag/indexing/index-collection.ts';
import type { FilePreparer, IndexResult, Prepared } from '../services/rag/indexing/index-collection.ts';
import { LruCache } from '../services/rag/lru-cache.ts';
import { isSkipped } from '../services/rag/sources/source-file.ts';
import { walkProject } from '../services/rag/sources/walk.ts';
import { copyCorpus, corpusDirectory } from './rag-eval/corpus.ts';
import { CachingEmbedder } from './rag-eval/embedding-cache.ts';
import { enginesOf, openEngines } from './rag-eval/engines.ts';
import type { BenchEngine, OpenEngines } from './rag-eval/engines.ts';
import { EVAL_FOLDER, evalFilesOf } from './rag-eval/eval-files.ts';
import { checkEvalSet, loadEvalSet, setName } from './rag-eval/eval-set.ts';
import type { EvalQuery, EvalSet } from './rag-eval/eval-set.ts';
import { outcome, percentile, score } from './rag-eval/metrics.ts';
import type { QueryOutcome, RangeHit, Scores } from './rag-eval/metrics.ts';
import { runMain, stopOnSignals } from './run-main.ts';

const CLIENTS = Number(process.env.BENCH_RAG_CLIENTS ?? 10);
const CALLS = Number(process.env.BENCH_RAG_CALLS ?? 60);
/** Intra-op threads of the embedder that indexes (the service's default EMBEDDING_THREADS). */
const INDEX_THREADS = 2;
// One intra-op thread by default, as the service embeds queries (local-retrieval.ts, EMBED_QUERY).
const QUERY_THREADS = Number(process.env.BENCH_RAG_QUERY_THREADS ?? 1);
const VERBOSE = process.env.BENCH_RAG_VERBOSE === '1';
const EMBED_CACHE = process.env.BENCH_RAG_EMBED_CACHE === '1';
const K = 10;

type Method = 'bm25' | 'vector' | 'plain rrf' | 'no priors' | 'hybrid';
const METHODS: readonly Method[] = ['bm25', 'vector', 'plain rrf', 'no priors', 'hybrid'];
/** The file priors off (services/rag/index-store/file-priors.ts): every kind counts fully, near-copies too. */
const NO_PRIORS = { kindWeights: { code: 1, test: 1, declaration: 1, prose: 1 }, nearCopyDecay: 1 } as const;

function rangeHits(hits: readonly SearchHit[]): RangeHit[] {
  return hits.map((h) => ({ file: h.metadata.file, startLine: h.metadata.startLine, endLine: h.metadata.endLine }));
}

function fmt(n: number, digits = 2): string {
  return n.toFixed(digits);
}

/** What one engine measured, phase by phase. */
interface EngineRun {
  readonly engine: BenchEngine;
  readonly label: string;
  full?: IndexResult;
  firstSearchMs?: number;
  ranks?: Ranks;
  /** the hybrid top 10's ids, per query */
  hybridTop?: string[][];
  incremental?: IndexResult;
  /** of the incremental run, the time spent reading, chunking and embedding the changed file */
  incrementalPrepareMs?: number;
  nothing?: IndexResult;
  times?: Latencies;
}

/** What one evaluation set measured, per engine, for the summary at the end. */
interface SetRun {
  readonly file: string;
  readonly set: EvalSet;
  readonly runs: readonly EngineRun[];
}

async function main(): Promise<void> {
  const names = enginesOf(process.env.BENCH_RAG_ENGINE);
  if (!Number.isInteger(QUERY_THREADS) || QUERY_THREADS < 1) throw new Error('BENCH_RAG_QUERY_THREADS must be a positive integer');
  const files = evalFilesOf(process.env.BENCH_RAG_EVAL, readdirSync(EVAL_FOLDER));
  // Held-out sets last, so the development figures come first and the held-out ones stand apart.
  const sets = files
    .map((file) => ({ file, set: loadEvalSet(file) }))
    .sort((a, b) => Number(a.set.heldOut === true) - Number(b.set.heldOut === true));
  console.log(
    `evaluation sets ${sets.map(({ file, set }) => `${file}${set.heldOut ? ' (HELD OUT: run only to report)' : ''}`).join(', ')}; ` +
      `latency per set: ${CLIENTS} clients x ${CALLS} calls`,
  );
  const onnx = await OnnxEmbedder.load(process.env.EMBEDDING_MODEL_DIR || defaultModelDir(), { intraOpThreads: INDEX_THREADS });
  // Loaded once for every set; the same embedder when the thread counts agree.
  let queryEmbedder = onnx;
  const done: SetRun[] = [];
  try {
    if (QUERY_THREADS !== INDEX_THREADS) queryEmbedder = await OnnxEmbedder.load(onnx.folder.dir, { intraOpThreads: QUERY_THREADS });
    for (const { file, set } of sets) {
      console.log('');
      console.log(`=== ${file}${set.heldOut ? '  [HELD OUT: run only to report, never to tune against]' : '  [development]'} ===`);
      done.push({ file, set, runs: await runSet(file, set, names, onnx, queryEmbedder) });
    }
    vectorScan(onnx.dimensions);
    printSummary(done);
  } finally {
    if (queryEmbedder !== onnx) await queryEmbedder.close();
    await onnx.close();
  }
}

async function runSet(
  evalFile: string,
  set: EvalSet,
  names: ReturnType<typeof enginesOf>,
  onnx: OnnxEmbedder,
  queryEmbedder: OnnxEmbedder,
): Promise<EngineRun[]> {
  const corpusRoot = await corpusDirectory(set.corpus, evalFile);
  const heldOut = set.heldOut ? ' HELD OUT' : '';

  // 1. The set itself: answers exist, conceptual queries share no term with the answers' symbols.
  const checks = await checkEvalSet(set, corpusRoot);
  const byId = new Map(checks.map((c) => [c.id, c]));
  const conceptual = set.queries.filter((q) => q.conceptual);
  const violations = conceptual.filter((q) => (byId.get(q.id)?.sharedWithSymbols.length ?? 0) > 0);
  if (violations.length > 0) {
    throw new Error(
      `${evalFile}: queries marked conceptual share terms with their answers' symbols: ${violations.map((q) => `${q.id} (${byId.get(q.id)?.sharedWithSymbols.join(', ')})`).join('; ')}`,
    );
  }
  const pathFree = conceptual.filter((q) => (byId.get(q.id)?.sharedWithPaths.length ?? 0) === 0).length;
  for (const c of checks)
    for (const a of c.unreachable) console.error(`warning: ${c.id} ${a.file}:${a.lines.join('-')} is covered by no chunk of its size`);
  console.log(
    `evaluation set  ${evalFile}${heldOut}: ${set.queries.length} queries over ${set.corpus.package} ${set.corpus.version} (${set.corpus.root})`,
  );
  console.log(
    `                ${conceptual.length} conceptual (no term shared with the answers' symbols, checked), ${pathFree} of them share none with the answer's path either`,
  );

  // 2. Chunk and embed a copy of the sources once (a copy, so one file can be changed later): every
  // engine is given the same chunks and vectors, so what differs between them is the engine.
  const work = mkdtempSync(join(tmpdir(), 'bench-rag-'));
  let opened: OpenEngines | undefined;
  const cleanup = async () => {
    await opened?.close();
    rmSync(work, { recursive: true, force: true });
  };
  const removeSignalHandlers = stopOnSignals(cleanup, (line) => console.error(line));
  try {
    const source = join(work, 'src');
    copyCorpus(corpusRoot, source);
    const cache = EMBED_CACHE
      ? new CachingEmbedder(onnx, join(homedir(), '.cache', 'svc', 'bench-rag', `${onnx.folder.manifest.name}.vectors`))
      : undefined;
    const embedder: Embedder = cache ?? onnx;
    const shared = await prepareAll(source, embedder);
    cache?.save();
    console.log(
      `chunk + embed   ${shared.prepared.size} files, ${shared.chunks} chunks read, chunked and embedded once for every engine: ${fmt(shared.ms / 1000, 1)} s ` +
        `(${fmt((shared.chunks * 1000) / shared.ms, 1)} chunks/s)${cache ? ` [embedding cache: ${cache.hits} hits, ${cache.misses} embedded: NOT a from-scratch time]` : ''}`,
    );
    const queryVectors = new Map<string, Float32Array>();
    for (const q of set.queries) queryVectors.set(q.id, (await onnx.embed([q.query], 'query'))[0] as Float32Array);

    opened = await openEngines(names, {
      work,
      model: embeddingIdentity(onnx.folder.manifest.name, onnx.dimensions),
      log: (line) => console.error(`  ${line}`),
    });
    const runs: EngineRun[] = opened.engines.map((engine) => ({ engine, label: `[${engine.name}]`.padEnd(10) }));
    for (const run of runs) console.log(`engine          ${run.label} ${run.engine.where}`);

    // 3. Full index per engine, from the shared preparation: the engine's own time, then the total.
    for (const run of runs) {
      const { index } = run.engine;
      let lastDraw = 0;
      const full = await indexCollection({
        store: index,
        embedder,
        files: walkProject(source),
        prepare: replay(shared.prepared),
        onProgress: (p) => {
          if (!process.stderr.isTTY || performance.now() - lastDraw < 500) return;
          lastDraw = performance.now();
          process.stderr.write(`\r  ${run.engine.name}: writing ${p.filesDone}/${p.filesTotal} files, ${p.chunks} chunks`);
        },
      });
      if (process.stderr.isTTY) process.stderr.write('\r\u001b[K');
      const counts = await index.counts();
      if (full.filesIndexed !== shared.prepared.size || counts.chunks !== shared.chunks) {
        throw new Error(
          `${run.engine.name} holds ${full.filesIndexed} files and ${counts.chunks} chunks, prepared were ${shared.prepared.size} and ${shared.chunks}`,
        );
      }
      run.full = full;
      const total = shared.ms + full.durationMs;
      console.log(
        `full index      ${run.label} ${full.filesIndexed} files, ${counts.chunks} chunks, ${full.filesSkipped} skipped, ${fmt(total / 1000, 1)} s ` +
          `(${fmt((counts.chunks * 1000) / total, 1)} chunks/s) = chunk + embed ${fmt(shared.ms / 1000, 1)} s (above, shared) + this engine ${fmt(full.durationMs / 1000, 2)} s ` +
          '(list and hash the sources, then each file written in its own transaction with its lexical terms and vectors)',
      );
    }

    // 4. Quality, with the same query vectors on every engine.
    for (const run of runs) {
      const { index } = run.engine;
      const first = set.queries[0] as EvalQuery;
      const started = performance.now();
      await index.search(first.query, queryVectors.get(first.id) as Float32Array, K);
      run.firstSearchMs = performance.now() - started;
      const ranks = Object.fromEntries(METHODS.map((m) => [m, { line: [], file: [] }])) as unknown as Ranks;
      run.hybridTop = [];
      for (const q of set.queries) {
        const vector = queryVectors.get(q.id) as Float32Array;
        const results: Record<Method, SearchHit[]> = {
          bm25: await index.hits(await index.searchBm25(q.query, K)),
          vector: await index.hits(await index.searchVector(vector, K)),
          // RRF of BM25 and vectors alone: no query profile, no named list (the reference)
          'plain rrf': await index.search(q.query, vector, K, { plainTextBm25Weight: 1, namedWeight: 0, ...NO_PRIORS }),
          'no priors': await index.search(q.query, vector, K, NO_PRIORS),
          hybrid: await index.search(q.query, vector, K),
        };
        for (const m of METHODS) {
          ranks[m].line.push(outcome(rangeHits(results[m]), q.answers));
          ranks[m].file.push(outcome(rangeHits(results[m]), q.answers, true));
        }
        run.hybridTop.push(results.hybrid.map((h) => h.id));
        if (VERBOSE) printQuery(q, ranks, results.hybrid);
      }
      run.ranks = ranks;
      printQuality(`${run.label.trim()} ${setName(set)}${heldOut}`, set.queries, ranks);
      console.log(`first search    ${run.label} the first hybrid search after the full index: ${fmt(run.firstSearchMs)} ms`);
    }

    // 5. One changed file (the first query's first answer file), re-indexed by each engine with its
    // own chunking and embedding, as the indexer does.
    const changed = (set.queries[0] as EvalQuery).answers[0]?.file as string;
    const path = join(source, changed);
    const appended = appendedFunction(changed);
    const before = readFileSync(path, 'utf8');
    writeFileSync(path, `${before}${appended}`);
    const changedWhat = `${changed}, ${before.split('\n').length} lines`;
    for (const run of runs) {
      const { index } = run.engine;
      const timed = timedPreparer(preparedHere({ embedder: onnx, batchSize: DEFAULT_BATCH_SIZE, recipe: DEFAULT_RECIPE }));
      const incremental = await indexCollection({ store: index, embedder: onnx, files: walkProject(source), prepare: timed.prepare });
      const full = run.full as IndexResult;
      if (incremental.filesIndexed !== 1 || incremental.filesUnchanged !== full.filesIndexed - 1) {
        throw new Error(
          `${run.engine.name}: one changed file re-indexed ${incremental.filesIndexed} files (${incremental.filesUnchanged} unchanged)`,
        );
      }
      const nothing = await indexCollection({ store: index, embedder: onnx, files: walkProject(source) });
      Object.assign(run, { incremental, incrementalPrepareMs: timed.ms(), nothing });
      console.log(
        `re-index        ${run.label} one changed file (${changedWhat}): ${fmt(incremental.durationMs, 0)} ms (1 file, ${incremental.chunks} chunks written, ${incremental.chunks - incremental.chunksReused} of them embedded, the rest kept; ${incremental.filesUnchanged} files unchanged; ` +
          `read + chunk + embed ${fmt(timed.ms(), 0)} ms, the rest ${fmt(incremental.durationMs - timed.ms(), 0)} ms: listing, hashing, the engine's reads and write); ` +
          `nothing changed: ${fmt(nothing.durationMs, 0)} ms`,
      );
    }

    // 6. Latency, one engine at a time.
    for (const run of runs) {
      run.times = await latency(
        run.label,
        run.engine.index,
        queryEmbedder,
        set.queries.map((q) => ({ text: q.query, vector: queryVectors.get(q.id) as Float32Array })),
      );
    }

    for (const run of runs) printTargets(run, set.queries);
    printSideBySide(runs, set.queries, shared.ms);
    return runs;
  } finally {
    removeSignalHandlers();
    await cleanup();
  }
}

/** A small documented function in the changed file's language, appended for the re-index. */
function appendedFunction(file: string): string {
  if (file.endsWith('.ts')) {
    return '\n/** Picks the first server, for tests. */\nexport function firstServer<T>(servers: T[]): T | undefined {\n  return servers[0];\n}\n';
  }
  if (file.endsWith('.go')) {
    return '\n// firstItem picks the first item, for tests.\nfunc firstItem(items []string) string {\n\treturn items[0]\n}\n';
  }
  if (file.endsWith('.java')) {
    return '\n/** Picks the first item, for tests. */\nfinal class FirstItem {\n  static <T> T of(java.util.List<T> items) {\n    return items.get(0);\n  }\n}\n';
  }
  return '\n/** Picks the first item, for tests. */\nfunction firstItem(items) {\n  return items[0];\n}\n';
}

/** Every source file read, chunked and embedded as the indexer does, by path. */
async function prepareAll(source: string, embedder: Embedder): Promise<{ prepared: Map<string, Prepared>; chunks: number; ms: number }> {
  const started = performance.now();
  const prepare = preparedHere({ embedder, batchSize: DEFAULT_BATCH_SIZE, recipe: DEFAULT_RECIPE });
  const prepared = new Map<string, Prepared>();
  let chunks = 0;
  let lastDraw = 0;
  for await (const entry of walkProject(source)) {
    if (isSkipped(entry)) continue;
    const file = await prepare(entry, undefined, []);
    prepared.set(entry.path, file);
    if ('records' in file) chunks += file.records.length;
    if (process.stderr.isTTY && performance.now() - lastDraw >= 500) {
      lastDraw = performance.now();
      process.stderr.write(`\r  chunking and embedding: ${prepared.size} files, ${chunks} chunks`);
    }
  }
  if (process.stderr.isTTY) process.stderr.write('\r\u001b[K');
  return { prepared, chunks, ms: performance.now() - started };
}

/** The preparation made once, handed to an engine's index run in place of reading, chunking and embedding. */
function replay(prepared: ReadonlyMap<string, Prepared>): FilePreparer {
  return async (file) => {
    const done = prepared.get(file.path);
    if (!done) throw new Error(`${file.path} was not prepared`);
    return done;
  };
}

function timedPreparer(inner: FilePreparer): { prepare: FilePreparer; ms: () => number } {
  let ms = 0;
  return {
    prepare: async (file, storedHash, previous) => {
      const started = performance.now();
      try {
        return await inner(file, storedHash, previous);
      } finally {
        ms += performance.now() - started;
      }
    },
    ms: () => ms,
  };
}

/** Per method, each query's outcome at line and at file level, in the set's order. */
type Ranks = Record<Method, { line: QueryOutcome[]; file: QueryOutcome[] }>;

function printQuery(q: EvalQuery, ranks: Ranks, hybrid: readonly SearchHit[]): void {
  const last = (m: Method) => ranks[m].line.at(-1)?.rank ?? '-';
  const top = hybrid[0]
    ? `${hybrid[0].metadata.file}:${hybrid[0].metadata.startLine}-${hybrid[0].metadata.endLine} ${hybrid[0].metadata.symbol ?? ''}`
    : '';
  console.log(
    `  ${q.id} ${q.conceptual ? 'C' : 'L'} bm25 ${last('bm25')} vector ${last('vector')} hybrid ${last('hybrid')}  ${q.query}  -> ${top}`,
  );
}

const SUBSETS: Array<[string, (q: EvalQuery) => boolean]> = [
  ['all', () => true],
  ['conceptual', (q) => q.conceptual],
  ['identifier', (q) => !q.conceptual],
];

/** recall@5, recall@10, MRR and nDCG@10 of a method on a subset, at line and file level. */
function scores(queries: readonly EvalQuery[], ranks: Ranks, m: Method, keep: (q: EvalQuery) => boolean) {
  const kept = <T>(outcomes: readonly T[]) => outcomes.filter((_, i) => keep(queries[i] as EvalQuery));
  const line = kept(ranks[m].line);
  return { n: line.length, line: score(line), file: score(kept(ranks[m].file)) };
}

/** The four figures of one subset and method, file level then line level. */
function cells(file: Scores, line: Scores): string {
  const four = (x: Scores) => [x.recallAt5, x.recallAt10, x.mrr, x.ndcgAt10].map((v) => fmt(v).padStart(5)).join(' ');
  return `${four(file)}   ${four(line)}`;
}
const HEADS = `${['R@5', 'R@10', 'MRR', 'nDCG'].map((h) => h.padStart(5)).join(' ')}   ${['R@5', 'R@10', 'MRR', 'nDCG'].map((h) => h.padStart(5)).join(' ')}`;

function printQuality(label: string, queries: readonly EvalQuery[], ranks: Ranks): void {
  console.log('');
  console.log(`quality ${label} (line level: a hit counts when a third of it lies in an answer range; file level: the right file)`);
  console.log(`${''.padEnd(31)}${'file level'.padEnd(26)}line level`);
  console.log(`  subset       n   method      ${HEADS}`);
  for (const [name, keep] of SUBSETS) {
    for (const m of METHODS) {
      const { n, line, file } = scores(queries, ranks, m, keep);
      console.log(`  ${name.padEnd(11)} ${String(n).padStart(2)}   ${m.padEnd(10)}  ${cells(file, line)}`);
    }
  }
  console.log(
    '  (plain rrf: BM25 and vectors fused with equal weights and no named list, for reference; R@k: recall@k; nDCG: nDCG@10, binary relevance, see metrics.ts)',
  );
  console.log('');
}

/** Every set's hybrid figures per engine, development sets first, the held-out one marked. */
function printSummary(done: readonly SetRun[]): void {
  console.log('');
  console.log(`summary: hybrid, per set and engine${''.padEnd(26)}${'file level'.padEnd(26)}line level`);
  console.log(`  set                                engine   subset       n ${HEADS}   query p50 / p99 ms, ${CLIENTS} clients`);
  for (const { set, runs } of done) {
    const name = `${setName(set)}${set.heldOut ? ' HELD OUT' : ''}`;
    for (const run of runs) {
      const times = run.times as Latencies;
      for (const [subset, keep] of SUBSETS.slice(0, 2)) {
        const { n, line, file } = scores(set.queries, run.ranks as Ranks, 'hybrid', keep);
        const latencyCell = subset === 'all' ? `   ${fmt(times.p50, 1)} / ${fmt(times.p99, 1)}` : '';
        console.log(
          `  ${name.padEnd(34)} ${run.engine.name.padEnd(8)} ${subset.padEnd(11)} ${String(n).padStart(2)} ${cells(file, line)}${latencyCell}`,
        );
      }
    }
  }
  if (done.some(({ set }) => set.heldOut)) console.log('  (HELD OUT: run only to report; nothing is tuned against it)');
}

function printTargets(run: EngineRun, queries: readonly EvalQuery[]): void {
  const ranks = run.ranks as Ranks;
  const times = run.times as Latencies;
  const incremental = run.incremental as IndexResult;
  const verdict = (ok: boolean) => (ok ? 'met   ' : 'MISSED');
  const recall = (keep: (q: EvalQuery) => boolean) => {
    const s = scores(queries, ranks, 'hybrid', keep);
    return { line: s.line.recallAt5, file: s.file.recallAt5, mrr: s.file.mrr };
  };
  const all = recall(() => true);
  const concept = recall((q) => q.conceptual);
  // Issue 39's targets.
  console.log('');
  console.log(`targets ${run.label.trim()}`);
  console.log(`  ${verdict(all.file >= 0.9)} hybrid file-level recall@5 >= 0.9: ${fmt(all.file)}`);
  console.log(`  ${verdict(concept.file >= 0.85)} conceptual file-level recall@5 >= 0.85: ${fmt(concept.file)}`);
  console.log(`  ${verdict(all.mrr >= 0.75)} file-level MRR >= 0.75: ${fmt(all.mrr)}`);
  console.log(`  ${verdict(all.line >= 0.8)} line-level recall@5 >= 0.8: ${fmt(all.line)}`);
  console.log(`  ${verdict(incremental.durationMs < 1000)} one changed file re-indexed in < 1 s: ${fmt(incremental.durationMs, 0)} ms`);
  console.log(`  ${verdict(times.p50 < 50)} query p50 < 50 ms uncached, ${CLIENTS} clients: ${fmt(times.p50)} ms`);
  console.log(`  ${verdict(times.p99 < 150)} query p99 < 150 ms uncached, ${CLIENTS} clients: ${fmt(times.p99)} ms`);
  console.log(`  ${verdict(times.cachedP99 < 5)} cached p99 < 5 ms: ${fmt(times.cachedP99)} ms`);
}

/**
 * Uncached: each call embeds its query and runs the hybrid search, as the query path does without
 * a cache hit; CLIENTS async loops call at once, so calls queue on the one embedder and the one
 * JavaScript thread as they would in the service (and, for PostgreSQL, on its pool and server).
 * Search alone: the same clients with the query vectors ready, so only the engine is timed. Cached:
 * the same clients read the index's generation, as the query path does per query, and look the
 * answers up in an LRU keyed by (generation, query, k).
 */
interface Latencies {
  readonly p50: number;
  readonly p99: number;
  readonly perSecond: number;
  readonly searchP50: number;
  readonly searchP99: number;
  readonly cachedP99: number;
}

async function latency(
  label: string,
  index: CollectionIndex,
  embedder: Embedder,
  queries: ReadonlyArray<{ text: string; vector: Float32Array }>,
): Promise<Latencies> {
  const texts = queries.map((q) => q.text);
  const query = async (text: string) => {
    const [vector] = await embedder.embed([text], 'query');
    return index.search(text, vector as Float32Array, 5);
  };
  await query('warm up the vectors in memory');

  const sequential: number[] = [];
  for (const text of texts) {
    const started = performance.now();
    await query(text);
    sequential.push(performance.now() - started);
  }

  const concurrent = async (call: (i: number) => Promise<unknown>) => {
    const samples: number[] = [];
    let next = 0;
    const wall = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let i = 0; i < CALLS; i++) {
          const n = next++ % queries.length;
          const started = performance.now();
          await call(n);
          samples.push(performance.now() - started);
        }
      }),
    );
    return { samples, perSecond: (samples.length * 1000) / (performance.now() - wall) };
  };
  const embedAndSearch = (embedderForQueries: Embedder) => async (n: number) => {
    const text = texts[n] as string;
    const [vector] = await embedderForQueries.embed([text], 'query');
    await index.search(text, vector as Float32Array, 5);
  };
  const unbatched = await concurrent(embedAndSearch(embedder));
  const batched = await concurrent(embedAndSearch(new QueryBatcher(embedder)));
  const searchOnly = await concurrent(async (n) => {
    const q = queries[n] as { text: string; vector: Float32Array };
    await index.search(q.text, q.vector, 5);
  });

  const parts = { embed: [] as number[], bm25: [] as number[], vector: [] as number[], named: [] as number[], search: [] as number[] };
  for (const text of texts) {
    let t = performance.now();
    const [vector] = await embedder.embed([text], 'query');
    parts.embed.push(performance.now() - t);
    t = performance.now();
    await index.searchBm25(text, 50);
    parts.bm25.push(performance.now() - t);
    t = performance.now();
    await index.searchVector(vector as Float32Array, 50);
    parts.vector.push(performance.now() - t);
    t = performance.now();
    await index.searchNamed(text, 10);
    parts.named.push(performance.now() - t);
    t = performance.now();
    await index.search(text, vector as Float32Array, 5);
    parts.search.push(performance.now() - t);
  }

  // Keyed on (generation read now, query, k), as the query path is, so the cached latency is that of a real lookup.
  const cacheKey = (generation: number, query: string, k: number) => `${generation}\u0000${k}\u0000${query}`;
  const cache = new LruCache<string, SearchHit[]>(1000);
  for (const text of texts) cache.set(cacheKey(await index.generation(), text, 5), await query(text));
  const cached: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      for (let i = 0; i < CALLS * 10; i++) {
        const text = texts[next++ % texts.length] as string;
        const started = performance.now();
        const hit = cache.get(cacheKey(await index.generation(), text, 5));
        cached.push(performance.now() - started);
        if (!hit) throw new Error('the warmed cache missed');
      }
    }),
  );

  const row = (samples: readonly number[]) => `p50 ${fmt(percentile(samples, 50))} ms  p99 ${fmt(percentile(samples, 99))} ms`;
  console.log(`latency ${label} one client     embed + hybrid search, ${sequential.length} calls: ${row(sequential)}`);
  console.log(
    `latency ${label} ${CLIENTS} clients     embed + hybrid search, QueryBatcher, ${batched.samples.length} calls: ${row(batched.samples)}  (${fmt(batched.perSecond, 0)} queries/s)`,
  );
  console.log(`                  without the batcher    ${row(unbatched.samples)}  (${fmt(unbatched.perSecond, 0)} queries/s)`);
  console.log(
    `                  hybrid search alone     query vectors ready, ${searchOnly.samples.length} calls: ${row(searchOnly.samples)}  (${fmt(searchOnly.perSecond, 0)} searches/s)`,
  );
  console.log(`                  parts, one at a time   embed ${row(parts.embed)} | whole search ${row(parts.search)}`);
  console.log(
    `                                         bm25 top 50 ${row(parts.bm25)} | vectors top 50 ${row(parts.vector)} | named ${row(parts.named)}`,
  );
  console.log(
    `latency ${label} cached         generation read + LRU lookup keyed (generation, query, k), ${CLIENTS} clients, ${cached.length} calls: ${row(cached)}`,
  );
  return {
    p50: percentile(batched.samples, 50),
    p99: percentile(batched.samples, 99),
    perSecond: batched.perSecond,
    searchP50: percentile(searchOnly.samples, 50),
    searchP99: percentile(searchOnly.samples, 99),
    cachedP99: percentile(cached, 99),
  };
}

/** The engines' figures in one table, each line saying what it covers. */
function printSideBySide(runs: readonly EngineRun[], queries: readonly EvalQuery[], sharedMs: number): void {
  const width = 20;
  const line = (what: string, cell: (run: EngineRun) => string) =>
    console.log(`  ${what.padEnd(66)}${runs.map((r) => cell(r).padStart(width)).join('')}`);
  const pair = (a: number, b: number, digits = 2) => `${fmt(a, digits)} / ${fmt(b, digits)}`;
  console.log('');
  console.log(
    `side by side (the same sources, chunks, document vectors and query vectors for every engine; ${queries.length} queries, ${CLIENTS} clients)`,
  );
  line('', (r) => r.engine.name);
  for (const m of METHODS) {
    line(`recall@5 / MRR, file level, all ${queries.length}: ${m}`, (r) => {
      const s = scores(queries, r.ranks as Ranks, m, () => true);
      return pair(s.file.recallAt5, s.file.mrr);
    });
  }
  for (const [name, keep] of SUBSETS.slice(1)) {
    line(`recall@5 / MRR, file level, ${name}: hybrid`, (r) => {
      const s = scores(queries, r.ranks as Ranks, 'hybrid', keep);
      return pair(s.file.recallAt5, s.file.mrr);
    });
  }
  line(`recall@5 / MRR, line level, all ${queries.length}: hybrid`, (r) => {
    const s = scores(queries, r.ranks as Ranks, 'hybrid', () => true);
    return pair(s.line.recallAt5, s.line.mrr);
  });
  const reference = runs[0] as EngineRun;
  if (runs.length > 1) {
    line(`hybrid top 10 identical to ${reference.engine.name}'s, queries`, (r) => {
      const mine = r.hybridTop as string[][];
      const theirs = reference.hybridTop as string[][];
      return `${mine.filter((ids, i) => ids.join('\n') === theirs[i]?.join('\n')).length} of ${mine.length}`;
    });
  }
  const times = (r: EngineRun) => r.times as Latencies;
  line(`query p50 / p99 ms, ${CLIENTS} clients, embed + hybrid search (QueryBatcher)`, (r) => pair(times(r).p50, times(r).p99));
  line('  queries/s', (r) => fmt(times(r).perSecond, 0));
  line(`  hybrid search alone, query vectors ready: p50 / p99 ms`, (r) => pair(times(r).searchP50, times(r).searchP99));
  line('  cached (generation read + LRU): p99 ms', (r) => fmt(times(r).cachedP99));
  line('first hybrid search after the full index, ms', (r) => fmt(r.firstSearchMs as number, 1));
  line(`full index s: chunk + embed ${fmt(sharedMs / 1000, 1)} s (shared) + the engine's`, (r) =>
    fmt((sharedMs + (r.full as IndexResult).durationMs) / 1000, 1),
  );
  line('  the engine alone s (list, hash, write every file)', (r) => fmt((r.full as IndexResult).durationMs / 1000, 2));
  line('one changed file ms (read + chunk + embed it, list, hash, write)', (r) => fmt((r.incremental as IndexResult).durationMs, 0));
  line('  without read + chunk + embed, ms', (r) => fmt((r.incremental as IndexResult).durationMs - (r.incrementalPrepareMs as number), 0));
  line('nothing changed ms (list, hash, compare with the stored hashes)', (r) => fmt((r.nothing as IndexResult).durationMs, 0));
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
  console.log(`exact vector scan (SQLite engine's in-memory scan; ${dimensions} dims, top 50, random data)  ${line.join(', ')}`);
}

await runMain(main, (line) => console.error(line));
