import { ConsumerRunner } from '../../events/consumer.ts';

interface Stop {
  stop: () => Promise<unknown> | void;
  /** A consumer group's runner: it waits for its fetch in flight and leaves its group, needing nothing of its neighbours. */
  consumer: boolean;
}

/**
 * What a service has started so far, stopped newest first: on stop, and also when a later part
 * fails to start, so a failed start leaves no consumer or timer running behind it.
 */
export class Parts {
  readonly #stops: Stop[] = [];

  /** Registers a started part and hands it back. */
  add<T extends { stop(): Promise<unknown> | void }>(part: T): T {
    this.#stops.push({ stop: () => part.stop(), consumer: part instanceof ConsumerRunner });
    return part;
  }

  /** Registers how to undo something that is not an object with stop(). */
  onStop(stop: () => Promise<unknown> | void): void {
    this.#stops.push({ stop, consumer: false });
  }

  /**
   * Stops everything, newest first; a part that fails to stop does not keep the others running.
   * Consumer runners registered one after another stop together: each waits for the broker to
   * answer its fetch in flight (up to maxWaitTimeInMs) and then leaves its group, and one after
   * another those waits added up to seconds of a Ctrl-C.
   */
  async stopAll(onError?: (err: unknown) => void): Promise<void> {
    const stops = this.#stops.splice(0).reverse();
    const stopOne = async (part: Stop) => {
      try {
        await part.stop();
      } catch (err) {
        onError?.(err);
      }
    };
    for (let i = 0; i < stops.length; ) {
      let end = i + 1;
      if (stops[i]!.consumer) while (end < stops.length && stops[end]!.consumer) end++;
      await Promise.all(stops.slice(i, end).map(stopOne));
      i = end;
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
