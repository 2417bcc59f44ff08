/**
 * Whether a signed webhook is one this deployment acts on (pure). Lemon Squeezy signs test-mode
 * and live events with the same secret when one is set for both, and a secret may be shared by
 * several stores: the signature says who sent it, not which store or mode it belongs to.
 */

export type WebhookIgnoredBecause = 'test-mode' | 'other-store';

export interface WebhookScope {
  /** PAYMENT_STORE_ID; null: every store's events are acted on. */
  storeId: string | null;
  /** PAYMENT_ALLOW_TEST_MODE: a developer's setup, where test purchases should grant keys. */
  allowTestMode: boolean;
}

/**
 * Why billing must not act on `body`, or null. A body that is not a JSON object is not judged here:
 * billing dead-letters it, so ops see it. Test mode counts when either meta.test_mode or the
 * object's own attributes.test_mode says so: the cautious reading of two flags that should agree.
 * With a store configured, an event without a store id cannot be shown to be ours.
 */
export function ignoredBecause(body: unknown, scope: WebhookScope): WebhookIgnoredBecause | null {
  if (!isRecord(body)) return null;
  const attributes = isRecord(body.data) && isRecord(body.data.attributes) ? body.data.attributes : {};
  const meta = isRecord(body.meta) ? body.meta : {};
  if (!scope.allowTestMode && (meta.test_mode === true || attributes.test_mode === true)) return 'test-mode';
  if (scope.storeId !== null && idOf(attributes.store_id) !== scope.storeId) return 'other-store';
  return null;
}

function idOf(value: unknown): string | null {
  if (typeof value === 'number' && Number.isInteger(value)) return String(value);
  return typeof value === 'string' && value.length > 0 ? value : null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
