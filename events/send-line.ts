/**
 * One send at a time per topic, whether its caller still waits for it or not.
 *
 * kafkajs' idempotent producer takes a partition's next sequence number when a produce request goes
 * out and gives it back when the request fails, timeouts included, then retries with whatever number
 * is next then. A request that timed out may still have been appended (a broker that stalled, then
 * woke). Another send taking the number given back is then taken by the broker for a duplicate of it:
 * acknowledged at the first one's offset and dropped, while the first is appended twice (seen with a
 * frozen broker: test/integration/events/publisher-freeze.int.spec.ts). And a send whose caller gave up
 * (a 503) is still retried until the broker takes it, so without a line its copy lands whenever its
 * retry fires, after later events and the caller's own re-publish, too late for the projections'
 * re-publish guard, which only looks back over a document's last events.
 *
 * kafkajs already sends one produce request at a time per broker, so the line costs no parallelism on a
 * broker; it only keeps a topic's sends from starting while one before them is unsettled.
 */
export class SendLine {
  readonly #byTopic = new Map<string, Set<Promise<unknown>>>();
  readonly #hooks: { abandoned?: () => void; settled?: () => void };

  /** `abandoned` and `settled` are told of each send given up on after it started, and of its settling (a gauge's inc and dec). */
  constructor(hooks: { abandoned?: () => void; settled?: () => void } = {}) {
    this.#hooks = hooks;
  }

  /** Sends started and unsettled, counted once each. */
  get size(): number {
    const all = new Set<Promise<unknown>>();
    for (const sends of this.#byTopic.values()) for (const send of sends) all.add(send);
    return all.size;
  }

  /** Whether a send on any of these topics is started and unsettled. */
  holds(topics: readonly string[]): boolean {
    return this.#byTopic.size > 0 && topics.some((topic) => (this.#byTopic.get(topic)?.size ?? 0) > 0);
  }

  /**
   * Starts `send` once no send on its topics is unsettled. If `signal` aborts first (its caller gave up),
   * it never starts: it would only add a copy nobody waits for. If it aborts after the start, the send
   * stays in the line until it settles.
   */
  async run<T>(topics: readonly string[], signal: AbortSignal, send: () => Promise<T>): Promise<T> {
    // Checked again after every wait, in the same step as the start: the sends waiting behind one wake
    // together, and only the first of them may go. A caller giving up leaves the line at once, so a send
    // stuck for as long as Kafka is away keeps no one else's events in memory.
    while (this.holds(topics)) {
      signal.throwIfAborted();
      await Promise.race([Promise.allSettled(this.#pending(topics)), abortOf(signal)]);
    }
    signal.throwIfAborted();
    const sending = send();
    this.#add(topics, sending);
    const abandon = () => {
      this.#hooks.abandoned?.();
      const settled = () => this.#hooks.settled?.();
      sending.then(settled, settled);
    };
    signal.addEventListener('abort', abandon, { once: true });
    try {
      return await sending;
    } finally {
      signal.removeEventListener('abort', abandon);
    }
  }

  #pending(topics: readonly string[]): Promise<unknown>[] {
    return topics.flatMap((topic) => [...(this.#byTopic.get(topic) ?? [])]);
  }

  #add(topics: readonly string[], send: Promise<unknown>): void {
    for (const topic of topics) {
      const sends = this.#byTopic.get(topic) ?? new Set<Promise<unknown>>();
      sends.add(send);
      this.#byTopic.set(topic, sends);
    }
    const release = () => {
      for (const topic of topics) {
        const sends = this.#byTopic.get(topic);
        sends?.delete(send);
        if (sends?.size === 0) this.#byTopic.delete(topic);
      }
    };
    send.then(release, release);
  }
}

/** Resolves when `signal` aborts; the listener goes with the signal, which lives as long as one publish. */
function abortOf(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
