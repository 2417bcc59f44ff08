/**
 * Embedding speed on this machine: documents per second when indexing 200 code chunks one per inference
 * (the embedder's default batch), and the latency of one query embedding (what a search waits for), per
 * intra-op thread count.
 *
 *   node bench/embedding.ts            (node_modules/.bin first on PATH, after provision.sh)
 *   BENCH_THREADS=2 BENCH_QUERIES=100 node bench/embedding.ts
 *
 * Env:
 *   EMBEDDING_MODEL_DIR  model folder (default: the one deploy/local/models/provision.sh makes)
 *   BENCH_THREADS        comma-separated intra-op thread counts to measure (default 1,2)
 *   BENCH_CHUNKS         documents to embed (default 200)
 *   BENCH_BATCH          documents per inference (default 1, as the service embeds)
 *   BENCH_QUERIES        timed single-query embeddings (default 50, after 5 untimed)
 *   BENCH_BASELINE_MODEL_DIR  a second model folder measured in the same run (say, the export before
 *                        requantizing: an older provision.sh's folder); prints ratios and the cosine
 *                        between the two models' vectors of each chunk
 *
 * The documents are this repository's own TypeScript (services/, events/), cut into 30-line chunks: real code with real
 * token lengths (truncated at the model's maximum like any long chunk). Results go to stdout.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OnnxEmbedder } from '../services/rag/embedding/embedder.ts';
import { defaultModelDir, readModelFolder } from '../services/rag/embedding/model-folder.ts';
import { cosine } from '../services/rag/embedding/pooling.ts';
import { runMain } from './run-main.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const LINES_PER_CHUNK = 30;
const QUERIES = [
  'where are retries backed off',
  'how is an API key hashed before it is stored',
  'rate limit per minute by tier',
  'replay a projection from the log',
];

function envInt(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

function codeChunks(count: number): string[] {
  const chunks: string[] = [];
  for (const file of ['services', 'events'].flatMap((d) => sourceFiles(join(ROOT, d))).sort()) {
    const lines = readFileSync(file, 'utf8').split('\n');
    for (let i = 0; i < lines.length && chunks.length < count; i += LINES_PER_CHUNK) {
      const chunk = lines
        .slice(i, i + LINES_PER_CHUNK)
        .join('\n')
        .trim();
      if (chunk.length > 0) chunks.push(chunk);
    }
  }
  if (chunks.length < count) throw new Error(`only ${chunks.length} chunks of source to embed`);
  return chunks;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

interface Figures {
  docsPerSecond: number;
  cpuMsPerDoc: number;
  vectors: Float32Array[];
}

async function measure(dir: string, threads: number, batchSize: number, chunks: readonly string[], queries: number): Promise<Figures> {
  const loadStart = performance.now();
  const embedder = await OnnxEmbedder.load(dir, { intraOpThreads: threads, batchSize });
  const loadMs = performance.now() - loadStart;
  const tokStart = performance.now();
  for (const c of chunks) embedder.folder.tokenizer.encode(c);
  const tokenizeMs = performance.now() - tokStart;

  const docStart = performance.now();
  const cpuStart = process.cpuUsage();
  const vectors = await embedder.embed(chunks, 'document');
  const docSeconds = (performance.now() - docStart) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  // CPU time as well as wall time: on a shared machine the wall clock also measures the neighbours.
  const cpuMsPerDoc = (cpu.user + cpu.system) / 1000 / chunks.length;

  for (let i = 0; i < 5; i++) await embedder.embed([QUERIES[i % QUERIES.length] ?? ''], 'query');
  const latencies: number[] = [];
  for (let i = 0; i < queries; i++) {
    const start = performance.now();
    await embedder.embed([QUERIES[i % QUERIES.length] ?? ''], 'query');
    latencies.push(performance.now() - start);
  }
  latencies.sort((a, b) => a - b);
  await embedder.close();
  console.log(
    `  threads ${threads}: load ${loadMs.toFixed(0)} ms; documents ${(chunks.length / docSeconds).toFixed(1)}/s at batch ${batchSize} ` +
      `(${cpuMsPerDoc.toFixed(0)} ms CPU each, tokenizing ${(tokenizeMs / chunks.length).toFixed(2)} ms of it); query p50 ${percentile(latencies, 50).toFixed(1)} ms, ` +
      `p95 ${percentile(latencies, 95).toFixed(1)} ms over ${queries}`,
  );
  return { docsPerSecond: chunks.length / docSeconds, cpuMsPerDoc, vectors };
}

async function describe(dir: string, chunks: readonly string[]): Promise<void> {
  const { manifest, tokenizer } = await readModelFolder(dir);
  const tokens = chunks.map((c) => tokenizer.encode(c).length);
  console.log(
    `${dir}: ${manifest.name}, ${manifest.dimensions} dimensions; ${chunks.length} chunks, ` +
      `mean ${Math.round(tokens.reduce((a, b) => a + b, 0) / tokens.length)} tokens, ${tokens.filter((n) => n >= tokenizer.maxLength).length} truncated at ${tokenizer.maxLength}`,
  );
}

async function main(): Promise<void> {
  const dir = process.env.EMBEDDING_MODEL_DIR || defaultModelDir();
  // Optional: another folder measured in the same run (e.g. the export before requantizing), for ratios.
  const baseline = process.env.BENCH_BASELINE_MODEL_DIR;
  const threads = (process.env.BENCH_THREADS ?? '1,2').split(',').map((t) => Number(t.trim()));
  const batchSize = envInt('BENCH_BATCH', 1);
  const queries = envInt('BENCH_QUERIES', 50);
  const chunks = codeChunks(envInt('BENCH_CHUNKS', 200));
  const folders = baseline ? [baseline, dir] : [dir];

  for (const folder of folders) await describe(folder, chunks);
  for (const t of threads) {
    const figures: Figures[] = [];
    for (const folder of folders) {
      if (baseline) console.log(folder === baseline ? 'baseline' : 'model');
      figures.push(await measure(folder, t, batchSize, chunks, queries));
    }
    const [base, model] = figures;
    if (!base || !model) continue;
    const cosines = model.vectors.map((v, i) => cosine(v, base.vectors[i] ?? new Float32Array(v.length))).sort((a, b) => a - b);
    console.log(
      `  threads ${t}: documents/s ${(model.docsPerSecond / base.docsPerSecond).toFixed(2)}x the baseline, CPU per document ` +
        `${(model.cpuMsPerDoc / base.cpuMsPerDoc).toFixed(2)}x; cosine to the baseline's vectors: min ${percentile(cosines, 0).toFixed(4)}, ` +
        `p5 ${percentile(cosines, 5).toFixed(4)}, median ${percentile(cosines, 50).toFixed(4)}`,
    );
  }
}

await runMain(main, (line) => console.error(line));
