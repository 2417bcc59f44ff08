import { expect } from 'chai';
import { newEvent, type Event } from '../../../events/envelope.ts';
import type { Projection } from '../../../events/projection.ts';
import { usersProjection } from '../../../services/accounts/users.projection.ts';
import { keysProjection } from '../../../services/keys/keys.projection.ts';

/**
 * Projections that read two topics see them interleaved in any order (live and replay differ):
 * every interleaving that keeps each topic's own order must give the same document.
 */
function fold(projection: Projection, events: readonly Event[]) {
  return events.reduce<Record<string, unknown> | null>(
    (doc, e) => projection.evolve(doc as never, e) as Record<string, unknown> | null,
    null,
  );
}

function interleavings<T>(a: readonly T[], b: readonly T[]): T[][] {
  if (a.length === 0) return [[...b]];
  if (b.length === 0) return [[...a]];
  return [...interleavings(a.slice(1), b).map((r) => [a[0]!, ...r]), ...interleavings(a, b.slice(1)).map((r) => [b[0]!, ...r])];
}

const at = new Date('2026-11-21T10:00:00Z');
const sub = { subscriptionId: 'sub-1', userId: 'user-1', providerUpdatedAt: at };
const created = newEvent(
  'subscription.created',
  {
    ...sub,
    customerId: 'cus-1',
    email: 'ada@example.com',
    name: 'Ada',
    variantId: '1',
    tier: 'pro',
    status: 'active',
    renewsAt: null,
    endsAt: null,
    customerPortalUrl: null,
    updatePaymentUrl: null,
  },
  { occurredAt: at },
);
const cancelled = newEvent(
  'subscription.cancelled',
  { ...sub, endsAt: at, email: 'ada@example.com', name: 'Ada', reactivateUrl: null },
  { occurredAt: at },
);
const ended = newEvent(
  'subscription.ended',
  { subscriptionId: 'sub-1', userId: 'user-1', endsAt: at, email: 'ada@example.com', name: 'Ada' },
  { occurredAt: at },
);

describe('projections over several topics (unit)', () => {
  it('users: registration and subscription events commute', () => {
    const registered = newEvent('account.registered', { userId: 'user-1', email: 'ada@example.com', name: 'Ada' }, { occurredAt: at });
    for (const subscriptionEvents of [[created], [created, cancelled], [created, cancelled, ended]] as Event[][]) {
      const results = interleavings<Event>([registered], subscriptionEvents).map((order) =>
        fold(usersProjection as unknown as Projection, order),
      );
      for (const r of results) expect(r).to.deep.equal(results[0]);
    }
    expect(fold(usersProjection as unknown as Projection, [created, registered])).to.include({ tier: 'pro', email: 'ada@example.com' });
  });

  it('keys: the generated key and subscription events commute', () => {
    const generated = newEvent(
      'key.generated',
      {
        keyHash: 'h'.repeat(64),
        last4: 'abcd',
        tier: 'pro',
        customerId: 'cus-1',
        subscriptionId: 'sub-1',
        email: 'ada@example.com',
        encryptedKey: 'x',
        source: 'subscription',
        generation: 0,
        replacesLast4: null,
      },
      { occurredAt: at },
    );
    for (const subscriptionEvents of [[created], [created, cancelled], [created, cancelled, ended]] as Event[][]) {
      const results = interleavings<Event>([generated], subscriptionEvents).map((order) =>
        fold(keysProjection as unknown as Projection, order),
      );
      for (const r of results) expect(r).to.deep.equal(results[0]);
    }
    expect(fold(keysProjection as unknown as Projection, [created, cancelled, ended, generated])).to.include({
      tier: 'free',
      keyHash: 'h'.repeat(64),
    });
  });
});
