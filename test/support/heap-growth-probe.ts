/**
 * Run with `node --expose-gc heap-growth-probe.ts <percent[,percent…]|v8>` (each percent set in turn;
 * v8: none set). Builds a live heap, runs a memory-reducing full collection (the kind V8's memory
 * reducer runs), then keeps adding live objects and prints, as one JSON line, how far the heap grew
 * before the next full collection started (null: not within what it adds, about 2.5 times the first).
 */
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { setHeapGrowth } from '../../services/platform/heap-growth.ts';

const LIVE_CHUNKS = 55;
const MAX_GROWTH_CHUNKS = 150;

const arg = process.argv[2] ?? '';
if (arg !== 'v8') for (const percent of arg.split(',')) setHeapGrowth(Number(percent));
const gc = globalThis.gc;
if (!gc) throw new Error('run with --expose-gc');

const live: object[][] = [];
/** About 0.7 MB of small live objects, with some garbage among them so that they age through scavenges. */
function addChunk(): void {
  const chunk: object[] = [];
  for (let i = 0; i < 8000; i++) {
    chunk.push({ i, s: `x${i}` });
    if (i % 1000 === 0) for (let j = 0; j < 200; j++) void { j };
  }
  live.push(chunk);
}

for (let n = 0; n < LIVE_CHUNKS; n++) addChunk();
gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
const survived = process.memoryUsage().heapUsed;

let fullCollections = 0;
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) fullCollections++;
  }
});
observer.observe({ entryTypes: ['gc'] });

let grewBeforeNext: number | null = null;
for (let n = 0; n < MAX_GROWTH_CHUNKS && grewBeforeNext === null; n++) {
  const before = process.memoryUsage().heapUsed;
  addChunk();
  // The observer reports on the next turn of the loop.
  await new Promise((resolve) => setImmediate(resolve));
  if (fullCollections > 0) grewBeforeNext = before - survived;
}
observer.disconnect();
const mb = (bytes: number) => Math.round(bytes / 1e5) / 10;
console.log(JSON.stringify({ survivedMb: mb(survived), grewBeforeNextMb: grewBeforeNext === null ? null : mb(grewBeforeNext) }));
