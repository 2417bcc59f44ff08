/**
 * Sends a caller stopped waiting for while the producer still retries them. kafkajs' idempotent producer
 * retries a send until the broker takes it, and each retry takes the partition's sequence number anew, so
 * an abandoned send lands as a record of its own whenever its retry timer fires: after events published
 * later, and after the caller's own re-publish. Consumers skip a re-published event only among a
 * document's last events, so a copy must not land far behind. A send on a topic with abandoned sends
 * therefore starts only once they settled, and a late copy lands next to its original.
 */
export class AbandonedSends {
  readonly #byTopic = new Map<string, Set<Promise<unknown>>>();
  readonly #hooks: { abandoned?: () => void; settled?: () => void };

  /** `abandoned` and `settled` are told of each send given up on and of its settling (a gauge's inc and dec). */
  constructor(hooks: { abandoned?: () => void; settled?: () => void } = {}) {
    this.#hooks = hooks;
  }

  /** Sends still unsettled, counted once each. */
  get size(): number {
    const all = new Set<Promise<unknown>>();
    for (const sends of this.#byTopic.values()) for (const send of sends) all.add(send);
    return all.size;
  }

  /** Whether a send abandoned on any of these topics is unsettled. */
  holds(topics: readonly string[]): boolean {
    return this.#byTopic.size > 0 && topics.some((topic) => this.#byTopic.has(topic));
  }

  /**
   * Starts `send` once no send abandoned on its topics is unsettled. If `signal` aborts first (its caller
   * gave up), it never starts: it would only add a copy nobody waits for. If it aborts after the start,
   * the send is held as abandoned until it settles.
   */
  async run<T>(topics: readonly string[], signal: AbortSignal, send: () => Promise<T>): Promise<T> {
    if (this.holds(topics)) await this.settled(topics);
    signal.throwIfAborted();
    const sending = send();
    const abandon = () => this.#add(topics, sending);
    signal.addEventListener('abort', abandon, { once: true });
    try {
      return await sending;
    } finally {
      signal.removeEventListener('abort', abandon);
    }
  }

  /** Resolves once no send abandoned on these topics is unsettled, including sends abandoned meanwhile. */
  async settled(topics: readonly string[]): Promise<void> {
    for (;;) {
      const pending = topics.flatMap((topic) => [...(this.#byTopic.get(topic) ?? [])]);
      if (pending.length === 0) return;
      await Promise.allSettled(pending);
    }
  }

  #add(topics: readonly string[], send: Promise<unknown>): void {
    for (const topic of topics) {
      const sends = this.#byTopic.get(topic) ?? new Set<Promise<unknown>>();
      sends.add(send);
      this.#byTopic.set(topic, sends);
    }
    this.#hooks.abandoned?.();
    const release = () => {
      for (const topic of topics) {
        const sends = this.#byTopic.get(topic);
        sends?.delete(send);
        if (sends?.size === 0) this.#byTopic.delete(topic);
      }
      this.#hooks.settled?.();
    };
    send.then(release, release);
  }
}
