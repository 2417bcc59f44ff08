/**
 * What a service has started so far, stopped newest first: on stop, and also when a later part
 * fails to start, so a failed start leaves no consumer or timer running behind it.
 */
export class Parts {
  readonly #stops: (() => Promise<unknown> | void)[] = [];

  /** Registers a started part and hands it back. */
  add<T extends { stop(): Promise<unknown> | void }>(part: T): T {
    this.#stops.push(() => part.stop());
    return part;
  }

  /** Registers how to undo something that is not an object with stop(). */
  onStop(stop: () => Promise<unknown> | void): void {
    this.#stops.push(stop);
  }

  /** Stops everything, newest first; a part that fails to stop does not keep the others running. */
  async stopAll(onError?: (err: unknown) => void): Promise<void> {
    for (const stop of this.#stops.splice(0).reverse()) {
      try {
        await stop();
      } catch (err) {
        onError?.(err);
      }
    }
  }

  /** Runs a start; if it throws, what it had started is stopped before the error goes on. */
  async starting<T>(start: () => Promise<T>): Promise<T> {
    try {
      return await start();
    } catch (err) {
      await this.stopAll();
      throw err;
    }
  }
}
