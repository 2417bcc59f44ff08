import type { Db } from 'mongodb';
import { EffectBusy, Effects } from '../../events/effects.ts';
import { newEvent } from '../../events/envelope.ts';
import { errorMessage } from '../../events/errors.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import type { Tier } from '../kernel/tiers.ts';
import type { Logger } from '../platform/logger.ts';
import type { PaymentWebhookReceived } from './events.ts';
import type { PaymentProvider } from './provider-api.ts';
import { reconcileSubscription, type Reconciled } from './reconciliation.ts';
import { getSubscription } from './subscriptions.projection.ts';
import type { WebhookScope } from './webhook-scope.ts';

/**
 * The reconciliation pass: every subscription of the store, as the provider's API lists it (paged),
 * compared with the subscriptions projection (reconciliation.ts). What the webhooks missed is
 * recorded in payments.webhooks as the webhook the provider would have sent, keyed by its
 * subscription like every webhook: the one billing consumer of that partition decides it in order
 * with the real webhooks (an older snapshot is ignored, a repeated one changes nothing), its events
 * get ids derived from it, and the issuer and the mailer claim their effects as for any webhook.
 * Publishing subscription events from here instead would make a second writer of one aggregate,
 * racing the consumer.
 *
 * One pass at a time across every replica and the CLI: a lease in the effects collection
 * (events/effects.ts), renewed page by page and released at the end.
 */

export const RECONCILIATION_LEASE = 'billing:reconciliation';

export interface ReconcileDeps {
  db: Db;
  publisher: Pick<EventPublisher, 'publish'>;
  provider: PaymentProvider;
  storeId: string;
  variantTiers: ReadonlyMap<string, Tier>;
  scope: WebhookScope;
  leaseMs: number;
  log: Logger;
  clock?: () => Date;
}

export interface ReconcileProgress {
  page: number;
  lastPage: number;
  listed: number;
  published: number;
}

export interface ReconcileReport {
  listed: number;
  /** Webhooks recorded for what the webhooks missed. */
  published: number;
  inStep: number;
  /** Out of scope (test mode, another store) or already over before we knew them. */
  skipped: number;
  unusable: { subscriptionId: string; error: string }[];
}

/** Another pass holds the lease (another replica, or `svc billing reconcile`). */
export class ReconciliationBusy extends Error {
  constructor(until: Date) {
    super(`another reconciliation is running (its lease ends ${until.toISOString()} unless renewed)`);
    this.name = 'ReconciliationBusy';
  }
}

export async function reconcile(deps: ReconcileDeps, onProgress?: (p: ReconcileProgress) => void): Promise<ReconcileReport> {
  // A fresh owner per pass: two passes in one process exclude each other too.
  const lease = new Effects(deps.db, { leaseMs: deps.leaseMs });
  try {
    const claim = await lease.claim(RECONCILIATION_LEASE);
    if (claim.outcome === 'done') throw new Error(`${RECONCILIATION_LEASE} is marked done; remove that effects record`);
  } catch (err) {
    if (err instanceof EffectBusy) throw new ReconciliationBusy(err.until);
    throw err;
  }
  try {
    return await pass(deps, () => lease.renew(RECONCILIATION_LEASE), onProgress);
  } finally {
    await lease
      .release(RECONCILIATION_LEASE)
      .catch((err: unknown) => deps.log.warn({ err: errorMessage(err) }, 'reconciliation lease not released'));
  }
}

async function pass(
  deps: ReconcileDeps,
  renew: () => Promise<void>,
  onProgress?: (p: ReconcileProgress) => void,
): Promise<ReconcileReport> {
  const report: ReconcileReport = { listed: 0, published: 0, inStep: 0, skipped: 0, unusable: [] };
  for (let page = 1, lastPage = 1; page <= lastPage; page++) {
    const listed = await deps.provider.listSubscriptions(deps.storeId, page);
    lastPage = listed.lastPage;
    for (const resource of listed.subscriptions) {
      report.listed++;
      const stored = await getSubscription(deps.db, idOf(resource));
      const result = reconcileSubscription(resource, stored, {
        variantTiers: deps.variantTiers,
        scope: deps.scope,
        receivedAt: deps.clock?.() ?? new Date(),
      });
      await record(deps, result, report);
    }
    onProgress?.({ page, lastPage, listed: report.listed, published: report.published });
    await renew();
  }
  return report;
}

async function record(deps: ReconcileDeps, result: Reconciled, report: ReconcileReport): Promise<void> {
  switch (result.verdict) {
    case 'in-step':
      report.inStep++;
      return;
    case 'out-of-scope':
    case 'history':
      report.skipped++;
      return;
    case 'unusable':
      report.unusable.push({ subscriptionId: result.subscriptionId, error: result.error });
      deps.log.warn({ subscriptionId: result.subscriptionId, error: result.error }, 'reconciliation: subscription not usable');
      return;
    case 'missed': {
      const event: PaymentWebhookReceived = newEvent('payment.webhook-received', result.webhook, {
        eventId: result.eventId,
        correlationId: result.webhook.webhookId,
      });
      await deps.publisher.publish(event);
      report.published++;
      deps.log.info(
        { subscriptionId: result.subscriptionId, decided: result.decided },
        'reconciliation: recorded what the webhooks missed',
      );
      return;
    }
    default: {
      const unhandled: never = result;
      throw new Error(`unhandled verdict ${JSON.stringify(unhandled)}`);
    }
  }
}

function idOf(resource: unknown): string {
  const id = typeof resource === 'object' && resource !== null ? (resource as { id?: unknown }).id : undefined;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : '(no id)';
}

/**
 * Runs the pass once per interval across all replicas: each replica checks every `checkMs` whether
 * the current interval's pass is recorded done (an effects record per interval), and if not, tries
 * to take the lease and run it. A pass that failed (provider away) is tried again at the next check.
 */
export class ReconciliationScheduler {
  readonly #deps: ReconcileDeps & { intervalMs: number };
  readonly #checkMs: number;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(deps: ReconcileDeps & { intervalMs: number }) {
    this.#deps = deps;
    this.#checkMs = Math.min(deps.intervalMs, 15 * 60_000);
  }

  start(): void {
    this.#stopped = false;
    this.#schedule();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  /** One check: runs the interval's pass unless it is done or running elsewhere; what it did. */
  async runDue(): Promise<'done-already' | 'busy' | ReconcileReport> {
    const { db, intervalMs, log } = this.#deps;
    const now = (this.#deps.clock?.() ?? new Date()).getTime();
    const slot = `${RECONCILIATION_LEASE}:${new Date(now - (now % intervalMs)).toISOString()}`;
    const slots = new Effects(db, { leaseMs: this.#deps.leaseMs });
    if ((await slots.get(slot))?.status === 'done') return 'done-already';
    try {
      const report = await reconcile(this.#deps);
      // Recorded after the pass: a pass cut short is run again, which publishes only what is still missing.
      const claim = await slots.claim(slot);
      if (claim.outcome === 'owned') await slots.done(slot);
      log.info({ ...report, unusable: report.unusable.length }, 'reconciliation pass done');
      return report;
    } catch (err) {
      if (err instanceof ReconciliationBusy) return 'busy';
      throw err;
    }
  }

  #schedule(): void {
    if (this.#stopped) return;
    // The first check waits too: a restart must not cost a pass, and the interval's pass runs once.
    this.#timer = setTimeout(() => {
      this.#running = this.runDue()
        .then(() => undefined)
        .catch((err: unknown) => this.#deps.log.warn({ err: errorMessage(err) }, 'reconciliation pass failed; will retry'))
        .finally(() => this.#schedule());
    }, this.#checkMs);
  }
}
