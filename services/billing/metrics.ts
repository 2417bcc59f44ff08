import { BoundedCounter } from '../platform/metrics.ts';
import { SUBSCRIPTION_EVENT_NAMES } from './provider-event.ts';
import { UNREADABLE_EVENT_NAME } from './provider-payload.ts';

const WEBHOOK_OUTCOMES = ['recorded', 'ignored', 'out_of_scope', 'unsigned', 'bad_signature', 'unrecorded'] as const;
type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];

/** What billing counts for the dashboard and alerts (deploy/grafana, deploy/prometheus). */
export const billingMetrics = {
  webhooks: new BoundedCounter({
    name: 'svc_webhooks_total',
    help:
      'Payment webhooks by provider event name (another name counts as "other", a body that is not JSON as "unreadable", one never ' +
      'read past its signature as "unknown") and outcome: recorded (billing acts on it), ignored (not a subscription event), ' +
      'out_of_scope (test mode, another store), unsigned, bad_signature, unrecorded (Kafka did not take it: answered 503)',
    labels: { type: [...SUBSCRIPTION_EVENT_NAMES, 'unreadable', 'unknown'] as const, outcome: WEBHOOK_OUTCOMES },
  }),
};

/** The provider's event name as a label: one of the names billing knows, never the sender's free text. */
export function countWebhook(eventName: string | null, outcome: WebhookOutcome): void {
  const type = eventName === null ? 'unknown' : eventName === UNREADABLE_EVENT_NAME ? 'unreadable' : eventName;
  billingMetrics.webhooks.inc({ type: type as (typeof SUBSCRIPTION_EVENT_NAMES)[number], outcome });
}
