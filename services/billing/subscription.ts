import { PermanentError } from '../../events/errors.ts';
import type { Tier } from '../kernel/tiers.ts';
import type { SubscriptionEventData, SubscriptionStatus } from './events.ts';
import { grantedTier } from './granted-tier.ts';
import type { ProviderEvent, ProviderInvoice, ProviderSubscription } from './provider-event.ts';

/**
 * The subscription state machine: initialState, evolve and decide, pure (no I/O, no clock).
 * A webhook about the subscription object carries the whole object, so decide compares that
 * snapshot with the state and emits the transitions between them; this makes duplicate and
 * out-of-order deliveries harmless (an older snapshot is ignored, a repeated one changes nothing).
 */
export interface SubscriptionState {
  status: 'none' | SubscriptionStatus;
  subscriptionId: string | null;
  customerId: string | null;
  userId: string | null;
  email: string | null;
  name: string | null;
  variantId: string | null;
  /** The paid tier; what the key gets is effectiveTier(). */
  tier: Tier;
  renewsAt: Date | null;
  endsAt: Date | null;
  customerPortalUrl: string | null;
  updatePaymentUrl: string | null;
  lastProviderUpdatedAt: Date | null;
  /** `${invoiceId}:${eventName}` of recent invoice webhooks, for duplicates. */
  seenInvoices: string[];
}

export const initialState = (): SubscriptionState => ({
  status: 'none',
  subscriptionId: null,
  customerId: null,
  userId: null,
  email: null,
  name: null,
  variantId: null,
  tier: 'free',
  renewsAt: null,
  endsAt: null,
  customerPortalUrl: null,
  updatePaymentUrl: null,
  lastProviderUpdatedAt: null,
  seenInvoices: [],
});

/** What the subscription grants now (grantedTier: the same rule for every read model). */
export const effectiveTier = (state: Pick<SubscriptionState, 'status' | 'tier'>): Tier => grantedTier(state.status, state.tier);

export type BillingCommand =
  | { type: 'ApplyProviderEvent'; event: ProviderEvent; variantTiers: ReadonlyMap<string, Tier> }
  | { type: 'EnforceDeadline'; now: Date };

/**
 * A snapshot the decider cannot use. Deterministic, so it goes to the dead-letter topic at once;
 * after a fix (a variant added to PAYMENT_VARIANT_TIERS, say) ops re-drive it.
 */
export class UnusableSnapshotError extends PermanentError {
  constructor(message: string) {
    super(message);
    this.name = 'UnusableSnapshotError';
  }
}

export class UnknownVariantError extends UnusableSnapshotError {
  constructor(variantId: string) {
    super(`variant ${variantId} is not in PAYMENT_VARIANT_TIERS; refusing to guess a tier`);
    this.name = 'UnknownVariantError';
  }
}

export function decide(command: BillingCommand, state: SubscriptionState): SubscriptionEventData[] {
  switch (command.type) {
    case 'ApplyProviderEvent':
      return command.event.kind === 'invoice'
        ? decideInvoice(command.event, state)
        : decideSnapshot(command.event, state, command.variantTiers);
    case 'EnforceDeadline':
      return enforceDeadline(command.now, state);
    default: {
      const unhandled: never = command;
      throw new Error(`unhandled command ${JSON.stringify(unhandled)}`);
    }
  }
}

const PROVIDER_STATUS: Record<string, SubscriptionStatus> = {
  active: 'active',
  on_trial: 'active',
  past_due: 'past_due',
  unpaid: 'past_due',
  paused: 'paused',
  cancelled: 'cancelled',
  expired: 'ended',
};

function statusOf(provider: string): SubscriptionStatus {
  const status = PROVIDER_STATUS[provider];
  if (!status) throw new UnusableSnapshotError(`unknown provider subscription status "${provider}"`);
  return status;
}

function tierOf(variantId: string, variantTiers: ReadonlyMap<string, Tier>): Tier {
  const tier = variantTiers.get(variantId);
  if (!tier) throw new UnknownVariantError(variantId);
  return tier;
}

const sameTime = (a: Date | null, b: Date | null) => (a?.getTime() ?? null) === (b?.getTime() ?? null);

function decideSnapshot(
  p: ProviderSubscription,
  state: SubscriptionState,
  variantTiers: ReadonlyMap<string, Tier>,
): SubscriptionEventData[] {
  if (state.lastProviderUpdatedAt && p.updatedAt.getTime() < state.lastProviderUpdatedAt.getTime()) return [];
  const newer = !state.lastProviderUpdatedAt || p.updatedAt.getTime() > state.lastProviderUpdatedAt.getTime();
  const target = statusOf(p.status);
  const tier = tierOf(p.variantId, variantTiers);
  const ids = { subscriptionId: p.subscriptionId, providerUpdatedAt: p.updatedAt };
  const userId = state.userId ?? p.userId;
  const events: SubscriptionEventData[] = [];
  let current: SubscriptionState = state;
  const emit = (e: SubscriptionEventData) => {
    events.push(e);
    current = evolve(current, e);
  };

  if (current.status === 'none') {
    // A subscription first seen through a later event (cancelled before created arrived) is
    // created from that snapshot as active, then moved to where the snapshot says it is.
    emit({
      type: 'subscription.created',
      data: {
        ...ids,
        customerId: p.customerId,
        userId: p.userId,
        email: p.email,
        name: p.name,
        variantId: p.variantId,
        tier,
        status: target === 'cancelled' || target === 'ended' ? 'active' : target,
        renewsAt: p.renewsAt,
        endsAt: target === 'cancelled' ? null : p.endsAt,
        customerPortalUrl: p.customerPortalUrl,
        updatePaymentUrl: p.updatePaymentUrl,
      },
    });
  }
  if (current.status === 'ended' && newer && reopens(target, p, current)) {
    // Ended by our own deadline (or expired), then a newer snapshot says the customer is paying
    // again (resumed after all, or a new period): the newer word wins, as for any other state.
    emit({ type: 'subscription.resumed', data: { ...ids, userId, tier, renewsAt: p.renewsAt } });
  }
  if (target === 'cancelled' && current.status !== 'cancelled' && current.status !== 'ended') {
    if (!p.endsAt) throw new UnusableSnapshotError(`subscription ${p.subscriptionId} is cancelled without ends_at`);
    emit({
      type: 'subscription.cancelled',
      data: { ...ids, userId, endsAt: p.endsAt, email: p.email, name: p.name, reactivateUrl: p.customerPortalUrl },
    });
  } else if (target === 'ended' && current.status !== 'ended') {
    emit({ type: 'subscription.expired', data: { ...ids, userId } });
  } else if (current.status === 'cancelled' && target !== 'cancelled' && target !== 'ended') {
    emit({ type: 'subscription.resumed', data: { ...ids, userId, tier, renewsAt: p.renewsAt } });
  }
  const changed =
    current.status !== target ||
    current.tier !== tier ||
    current.variantId !== p.variantId ||
    !sameTime(current.renewsAt, p.renewsAt) ||
    !sameTime(current.endsAt, p.endsAt) ||
    current.customerPortalUrl !== p.customerPortalUrl ||
    current.updatePaymentUrl !== p.updatePaymentUrl;
  if (changed && current.status !== 'ended') {
    emit({
      type: 'subscription.updated',
      data: {
        ...ids,
        userId,
        variantId: p.variantId,
        tier,
        status: target,
        renewsAt: p.renewsAt,
        endsAt: p.endsAt,
        customerPortalUrl: p.customerPortalUrl,
        updatePaymentUrl: p.updatePaymentUrl,
      },
    });
  }
  return events;
}

/**
 * Whether a newer snapshot of an ended subscription brings it back: any paying status does; a
 * cancellation only with a later end than the one that ended it (a new period, cancelled again),
 * since the same cancellation re-sent with a newer timestamp must not reopen what has ended.
 */
function reopens(target: SubscriptionStatus, p: ProviderSubscription, state: SubscriptionState): boolean {
  if (target === 'ended') return false;
  if (target !== 'cancelled') return true;
  return p.endsAt !== null && (state.endsAt === null || p.endsAt.getTime() > state.endsAt.getTime());
}

function decideInvoice(p: ProviderInvoice, state: SubscriptionState): SubscriptionEventData[] {
  // An invoice for a subscription we have not seen cannot change anything we know; the
  // subscription's own webhook brings its state.
  if (state.status === 'none') return [];
  if (state.seenInvoices.includes(`${p.invoiceId}:${p.eventName}`)) return [];
  const base = { subscriptionId: p.subscriptionId, userId: state.userId, invoiceId: p.invoiceId, providerUpdatedAt: p.updatedAt };
  if (p.eventName === 'subscription_payment_success') return [{ type: 'subscription.payment-succeeded', data: base }];
  return [
    {
      type: 'subscription.payment-failed',
      data: { ...base, email: state.email ?? p.email, name: state.name ?? p.name, updatePaymentUrl: state.updatePaymentUrl },
    },
  ];
}

function enforceDeadline(now: Date, state: SubscriptionState): SubscriptionEventData[] {
  if (state.status !== 'cancelled' || !state.endsAt || state.endsAt.getTime() > now.getTime()) return [];
  return [
    {
      type: 'subscription.ended',
      data: {
        subscriptionId: state.subscriptionId!,
        userId: state.userId,
        endsAt: state.endsAt,
        email: state.email ?? '',
        name: state.name,
      },
    },
  ];
}

const SEEN_INVOICES = 50;

export function evolve(state: SubscriptionState, event: SubscriptionEventData): SubscriptionState {
  switch (event.type) {
    case 'subscription.created': {
      const d = event.data;
      return {
        ...state,
        status: d.status,
        subscriptionId: d.subscriptionId,
        customerId: d.customerId,
        userId: d.userId,
        email: d.email,
        name: d.name,
        variantId: d.variantId,
        tier: d.tier,
        renewsAt: d.renewsAt,
        endsAt: d.endsAt,
        customerPortalUrl: d.customerPortalUrl,
        updatePaymentUrl: d.updatePaymentUrl,
        lastProviderUpdatedAt: d.providerUpdatedAt,
      };
    }
    case 'subscription.updated': {
      const d = event.data;
      return {
        ...state,
        status: d.status,
        variantId: d.variantId,
        tier: d.tier,
        renewsAt: d.renewsAt,
        endsAt: d.endsAt,
        customerPortalUrl: d.customerPortalUrl,
        updatePaymentUrl: d.updatePaymentUrl,
        lastProviderUpdatedAt: d.providerUpdatedAt,
      };
    }
    case 'subscription.cancelled':
      return { ...state, status: 'cancelled', endsAt: event.data.endsAt, lastProviderUpdatedAt: event.data.providerUpdatedAt };
    case 'subscription.resumed':
      return {
        ...state,
        status: 'active',
        tier: event.data.tier,
        renewsAt: event.data.renewsAt,
        endsAt: null,
        lastProviderUpdatedAt: event.data.providerUpdatedAt,
      };
    case 'subscription.expired':
      return { ...state, status: 'ended', lastProviderUpdatedAt: event.data.providerUpdatedAt };
    case 'subscription.ended':
      return { ...state, status: 'ended' };
    case 'subscription.payment-succeeded':
      return {
        ...state,
        status: state.status === 'past_due' ? 'active' : state.status,
        seenInvoices: [...state.seenInvoices, `${event.data.invoiceId}:subscription_payment_success`].slice(-SEEN_INVOICES),
      };
    case 'subscription.payment-failed':
      return {
        ...state,
        status: state.status === 'active' ? 'past_due' : state.status,
        seenInvoices: [...state.seenInvoices, `${event.data.invoiceId}:subscription_payment_failed`].slice(-SEEN_INVOICES),
      };
    default: {
      const unhandled: never = event;
      throw new Error(`unhandled event ${JSON.stringify(unhandled)}`);
    }
  }
}

/** The subscription decider as one value: what tests (given/when/then) and the consumers drive. */
export const subscriptionDecider = { initialState, evolve, decide };
