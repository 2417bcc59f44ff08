/**
 * Calls the caller's heartbeat at most once per interval, from the pipeline's own steps (between
 * embedding batches, files and listed entries), which are each well under a second. A timer would
 * fire while a step is still running and say "alive" for work that may be stuck; a beat from the
 * loop says the loop moves. A heartbeat that throws stops the indexing (the caller lost its
 * consumer session, say) with that error.
 */
export class Pulse {
  readonly #beat: (() => void | Promise<void>) | undefined;
  readonly #intervalMs: number;
  #last: number;

  constructor(beat: (() => void | Promise<void>) | undefined, intervalMs: number) {
    this.#beat = beat;
    this.#intervalMs = intervalMs;
    this.#last = performance.now();
  }

  async maybe(): Promise<void> {
    if (!this.#beat) return;
    const now = performance.now();
    if (now - this.#last < this.#intervalMs) return;
    this.#last = now;
    await this.#beat();
  }
}
