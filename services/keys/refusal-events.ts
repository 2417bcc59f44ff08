import { newEvent } from '../../events/envelope.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import type { Logger } from '../platform/logger.ts';
import { every } from '../platform/periodic.ts';
import type { KeyCheckRefused, KeyCheckRefusedData } from './events.ts';
import type { VerificationOutcome } from './verifications.ts';

/** At most this many refusal events wait for Kafka; beyond it the oldest are dropped, and counted. */
const MAX_WAITING = 10_000;

/**
 * Refused checks of known keys as `key.check-refused` events, for the owner's audit log: the first
 * refusal of a key with a code in a UTC minute, published at once (so the log shows it within a
 * second), and none for the rest of that minute (the verification counts have every one). So a key
 * hammered at 6000 requests a minute adds at most four events a minute, one per code, per process;
 * replicas publishing the same minute's refusal make one audit entry, whose id is key, code and minute.
 *
 * The hot path only looks up a set and, on the first refusal of the minute, queues; publishing is
 * never awaited by a validation. Events Kafka refuses are retried on the next refusal or tick.
 */
export class RefusalEvents {
  readonly #publisher: Pick<EventPublisher, 'publishOrdered'>;
  readonly #log: Logger;
  #minute = '';
  #seen = new Set<string>();
  #waiting: KeyCheckRefused[] = [];
  /** The publishing in progress, which stop() waits for. */
  #sending: Promise<void> | undefined;
  #dropped = 0;
  #ticks: { stop(): Promise<void> } | undefined;

  constructor(publisher: Pick<EventPublisher, 'publishOrdered'>, log: Logger) {
    this.#publisher = publisher;
    this.#log = log;
  }

  note(keyHash: string, subscriptionId: string, outcome: VerificationOutcome, now: number = Date.now()): void {
    if (outcome === 'VALID') return;
    const minute = new Date(now - (now % 60_000)).toISOString();
    if (minute !== this.#minute) {
      this.#minute = minute;
      this.#seen = new Set();
    }
    const id = `${keyHash}:${outcome}`;
    if (this.#seen.has(id)) return;
    this.#seen.add(id);
    const data: KeyCheckRefusedData = { keyHash, subscriptionId, code: outcome, minute };
    this.#waiting.push(newEvent('key.check-refused', data, { correlationId: `refusal:${keyHash.slice(0, 16)}:${minute}` }));
    this.#cap();
    void this.flush();
  }

  /** Publishes what waits, and what is noted meanwhile; one publishing at a time, which later calls join. */
  flush(): Promise<void> {
    this.#sending ??= this.#send().finally(() => {
      this.#sending = undefined;
    });
    return this.#sending;
  }

  async #send(): Promise<void> {
    while (this.#waiting.length > 0) {
      const batch = this.#waiting;
      this.#waiting = [];
      try {
        await this.#publisher.publishOrdered(batch);
      } catch (err) {
        // Back in front of what came meanwhile, for the next try; the cap still holds.
        this.#waiting = [...batch, ...this.#waiting];
        this.#cap();
        this.#log.warn({ err: String(err), waiting: this.#waiting.length }, 'refused-check events: publish failed; kept for the next try');
        break;
      }
    }
    if (this.#dropped > 0) {
      this.#log.warn({ dropped: this.#dropped }, 'refused-check events: dropped while Kafka was away (the verification counts have them)');
      this.#dropped = 0;
    }
  }

  /** The oldest beyond MAX_WAITING go, counted. */
  #cap(): void {
    const over = this.#waiting.length - MAX_WAITING;
    if (over <= 0) return;
    this.#waiting.splice(0, over);
    this.#dropped += over;
  }

  /** Retries what Kafka refused every `intervalMs`. */
  start(intervalMs: number): void {
    this.#ticks = every(intervalMs, () => this.flush(), this.#log, 'refused-check events flush', { firstDelayMs: intervalMs });
  }

  async stop(): Promise<void> {
    await this.#ticks?.stop();
    await this.flush();
  }
}
