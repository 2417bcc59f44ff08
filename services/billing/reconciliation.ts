import { derivedEventId } from '../../events/envelope.ts';
import type { Tier } from '../kernel/tiers.ts';
import type { PaymentWebhookReceivedData } from './events.ts';
import { parseProviderEvent } from './provider-payload.ts';
import { decide, initialState, UnusableSnapshotError, type SubscriptionState } from './subscription.ts';
import { ignoredBecause, type WebhookScope } from './webhook-scope.ts';

/**
 * What the provider says of one subscription against what the subscriptions projection holds
 * (pure). The provider's API returns the same subscription object a webhook carries as its `data`,
 * so the comparison is the decider's own: the snapshot is wrapped as the `subscription_updated`
 * webhook the provider would have sent, and whatever the decider would emit for it against the
 * stored state is what the webhooks missed. Nothing to emit: in step. So a second pass, once the
 * first one's webhook is applied, finds nothing.
 */

export const RECONCILIATION_EVENT_NAME = 'subscription_updated';

export type Reconciled =
  | { verdict: 'in-step'; subscriptionId: string }
  | { verdict: 'out-of-scope'; subscriptionId: string; reason: string }
  /** Unknown to us and already over at the provider (expired, or cancelled and past its end): nothing to grant, no key to mint and revoke. */
  | { verdict: 'history'; subscriptionId: string }
  | { verdict: 'unusable'; subscriptionId: string; error: string }
  | {
      verdict: 'missed';
      subscriptionId: string;
      /** The webhook to record, as the ingress would have: billing decides it from the log. */
      webhook: PaymentWebhookReceivedData;
      /** Its event id, derived from the snapshot, so two passes record the same event. */
      eventId: string;
      /** The subscription events the decider would emit now (for the report). */
      decided: string[];
    };

export interface ReconcileContext {
  variantTiers: ReadonlyMap<string, Tier>;
  scope: WebhookScope;
  receivedAt: Date;
}

export function reconcileSubscription(resource: unknown, stored: SubscriptionState | null, ctx: ReconcileContext): Reconciled {
  const subscriptionId = idOf(resource);
  const updatedAt = updatedAtOf(resource);
  const webhookId = `reconciliation:${subscriptionId}:${updatedAt}`;
  const body = {
    meta: { event_name: RECONCILIATION_EVENT_NAME, webhook_id: webhookId, test_mode: testModeOf(resource) },
    data: resource,
  };
  const outOfScope = ignoredBecause(body, ctx.scope);
  if (outOfScope !== null) return { verdict: 'out-of-scope', subscriptionId, reason: outOfScope };
  const parsed = parseProviderEvent(body, webhookId);
  if ('error' in parsed) return { verdict: 'unusable', subscriptionId, error: parsed.error };
  if ('ignored' in parsed || parsed.kind !== 'subscription') return { verdict: 'unusable', subscriptionId, error: 'not a subscription' };
  const over = parsed.status === 'expired' || (parsed.status === 'cancelled' && parsed.endsAt !== null && parsed.endsAt <= ctx.receivedAt);
  if (stored === null && over) return { verdict: 'history', subscriptionId };
  let decided: string[];
  try {
    decided = decide({ type: 'ApplyProviderEvent', event: parsed, variantTiers: ctx.variantTiers }, stored ?? initialState()).map(
      (d) => d.type,
    );
  } catch (err) {
    if (err instanceof UnusableSnapshotError) return { verdict: 'unusable', subscriptionId, error: err.message };
    throw err;
  }
  if (decided.length === 0) return { verdict: 'in-step', subscriptionId };
  return {
    verdict: 'missed',
    subscriptionId,
    eventId: derivedEventId(webhookId),
    decided,
    webhook: {
      webhookId,
      eventName: RECONCILIATION_EVENT_NAME,
      subscriptionId,
      receivedAt: ctx.receivedAt,
      body: JSON.stringify(body),
      ignoredBecause: null,
    },
  };
}

const field = (value: unknown, name: string): unknown =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[name] : undefined;

function idOf(resource: unknown): string {
  const id = field(resource, 'id');
  return typeof id === 'string' || typeof id === 'number' ? String(id) : '(no id)';
}

function updatedAtOf(resource: unknown): string {
  const at = field(field(resource, 'attributes'), 'updated_at');
  return typeof at === 'string' ? at : '(no updated_at)';
}

function testModeOf(resource: unknown): boolean {
  return field(field(resource, 'attributes'), 'test_mode') === true;
}
