import type { Db } from 'mongodb';
import { newEvent } from '../../events/envelope.ts';
import { derivedEventId } from '../../events/envelope.ts';
import { errorMessage } from '../../events/errors.ts';
import { publishAndApply } from '../../events/own-events.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import type { Logger } from '../platform/logger.ts';
import { decide } from './subscription.ts';
import { dueForEnd, subscriptionsProjection } from './subscriptions.projection.ts';

export interface DeadlineDeps {
  db: Db;
  publisher: Pick<EventPublisher, 'publishOrdered'>;
  log: Logger;
  intervalMs: number;
  clock?: () => Date;
}

/**
 * Ends cancelled subscriptions when their paid period is over, on our own clock rather than
 * waiting for the provider's subscription_expired. Several instances may run: the event id is
 * derived from the subscription and its end, so two of them publish the same event.
 */
export class DeadlineScheduler {
  private readonly deps: DeadlineDeps;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(deps: DeadlineDeps) {
    this.deps = deps;
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /**
   * One pass over every subscription whose paid period is over. One that fails (a record the
   * decider refuses, an outage on its publish) is logged and counted, and the others still end:
   * the failed one is due again at the next pass.
   */
  async runOnce(): Promise<{ ended: number; failed: number }> {
    const { db, publisher, log } = this.deps;
    const now = this.deps.clock?.() ?? new Date();
    let ended = 0;
    let failed = 0;
    for (const state of await dueForEnd(db, now)) {
      try {
        const decided = decide({ type: 'EnforceDeadline', now }, state);
        const seed = `${state.subscriptionId}:ended:${state.endsAt?.toISOString()}`;
        const events = decided.map((d, i) => newEvent(d.type, d.data, { eventId: derivedEventId(`${seed}:${i}`), correlationId: seed }));
        await publishAndApply(publisher, db, subscriptionsProjection, events);
        ended += events.length;
        if (events.length > 0) log.info({ subscriptionId: state.subscriptionId }, 'paid period over: subscription ended');
      } catch (err) {
        failed++;
        log.warn({ subscriptionId: state.subscriptionId, err: errorMessage(err) }, 'could not end subscription; will retry next pass');
      }
    }
    return { ended, failed };
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.runOnce()
        .then(() => undefined)
        .catch((err: unknown) => this.deps.log.warn({ err: errorMessage(err) }, 'deadline pass failed; will retry'))
        .finally(() => this.schedule(this.deps.intervalMs));
    }, delay);
  }
}
