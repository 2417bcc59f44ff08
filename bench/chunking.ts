/**
 * Chunking speed over a real package's source in node_modules: files/s, chunks/s and MB/s of the
 * whole path (language detection, parse, chunk), after an untimed pass that loads the grammars.
 *
 *   node bench/chunking.ts
 *   BENCH_PACKAGE=express BENCH_ROUNDS=5 node bench/chunking.ts
 *
 * Env:
 *   BENCH_PACKAGE    folder under node_modules (default mongodb: TypeScript sources, CommonJS, .d.ts, markdown)
 *   BENCH_ROUNDS     timed passes over all files; the median is reported (default 3)
 *   BENCH_MAX_CHARS  chunk size cap (default: the chunker's)
 *
 * Files are read into memory first, so disk speed is not measured. Only files with a grammar or
 * the markdown chunker are taken (JSON, source maps and the like are left out).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { chunkFile, detectLanguage } from '../services/rag/chunking/chunker.ts';
import { runMain } from './run-main.ts';

const PACKAGE = process.env.BENCH_PACKAGE ?? 'mongodb';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const options = process.env.BENCH_MAX_CHARS ? { maxChars: Number(process.env.BENCH_MAX_CHARS) } : {};

function sourcesOf(root: string): Array<{ path: string; content: string }> {
  const files: Array<{ path: string; content: string }> = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && detectLanguage(entry.name).chunker !== 'text')
        files.push({ path: relative(root, full), content: readFileSync(full, 'utf8') });
    }
  };
  walk(root);
  return files;
}

async function pass(files: ReadonlyArray<{ path: string; content: string }>): Promise<{ ms: number; chunks: number }> {
  const started = performance.now();
  let chunks = 0;
  for (const f of files) chunks += (await chunkFile(f.path, f.content, options)).length;
  return { ms: performance.now() - started, chunks };
}

async function main(): Promise<void> {
  const files = sourcesOf(join(process.cwd(), 'node_modules', PACKAGE));
  if (files.length === 0) throw new Error(`no source files under node_modules/${PACKAGE}`);
  const bytes = files.reduce((n, f) => n + Buffer.byteLength(f.content), 0);
  const languages = [...new Set(files.map((f) => detectLanguage(f.path).id))].sort();

  const warm = performance.now();
  await pass(files);
  console.error(`first pass (grammars loaded on demand): ${(performance.now() - warm).toFixed(0)} ms`);

  const runs: Array<{ ms: number; chunks: number }> = [];
  for (let i = 0; i < ROUNDS; i++) runs.push(await pass(files));
  const median = runs.map((r) => r.ms).sort((a, b) => a - b)[Math.floor(runs.length / 2)] as number;
  const chunks = runs[0]?.chunks ?? 0;

  console.log(`package    node_modules/${PACKAGE}: ${files.length} files, ${(bytes / 1e6).toFixed(2)} MB, ${languages.join(' ')}`);
  console.log(`chunks     ${chunks} per pass`);
  console.log(`median     ${median.toFixed(0)} ms per pass of ${ROUNDS}`);
  const perSecond = (n: number) => ((n * 1000) / median).toFixed(0);
  console.log(`speed      ${perSecond(files.length)} files/s, ${perSecond(chunks)} chunks/s, ${(bytes / 1e3 / median).toFixed(2)} MB/s`);
}

await runMain(main, (line) => console.error(line));
