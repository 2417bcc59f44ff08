import { setFlagsFromString } from 'node:v8';

/** The most HEAP_GROWTH_PERCENT may ask for: five times the survivors, past V8's own largest (four). */
export const MAX_HEAP_GROWTH_PERCENT = 400;

/**
 * Sets how far V8 lets the old generation grow past what survived a full collection before it starts
 * the next one: (1 + percent / 100) times the survivors; 0 gives the choice back to V8.
 *
 * Why a fixed factor: about 100 s after a full collection, even under load, V8's memory reducer runs one
 * that gives memory back and then leaves the old generation 10 % of headroom. A serving process fills
 * that in seconds, so full collections followed every few seconds until the headroom widened again.
 * Each one stopped the event loop for 6-17 ms, after marking that shared the core for 70-90 ms: the
 * worst rounds of /validate's p99 (docs/benchmarks.md, 2026-12-07). The headroom applies after every full
 * collection, not only the reducer's; the image also turns the reducer off (its ENTRYPOINT), since its own
 * collections were the worst pauses left.
 *
 * V8 reads the flag each time it sizes the heap, so setting it after start-up takes effect at the next
 * full collection. Node refuses it in NODE_OPTIONS, hence here rather than on every command line.
 */
export function setHeapGrowth(percent: number): void {
  if (!Number.isInteger(percent) || percent < 0 || percent > MAX_HEAP_GROWTH_PERCENT) {
    throw new RangeError(`heap growth must be a whole percent from 0 to ${MAX_HEAP_GROWTH_PERCENT}, got ${percent}`);
  }
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}
