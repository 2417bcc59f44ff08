import { expect } from 'chai';
import { newEvent } from '../../../events/envelope.ts';
import { auditEntryOf, entryIdOf, type AuditedEvent } from '../../../services/audit/audit-entry.ts';
import { auditProjection } from '../../../services/audit/audit.projection.ts';
import { auditFilter, auditQuery, cursorOf, positionOf } from '../../../services/audit/audit-query.ts';

const HASH = 'a'.repeat(64);
const at = new Date('2026-11-26T04:41:30.000Z');
const event = <E extends AuditedEvent>(type: E['type'], data: E['data']): E => {
  const made = newEvent(type, data as never, { correlationId: 'c' });
  return { ...made, metadata: { ...made.metadata, occurredAt: at } } as unknown as E;
};

describe('audit log: entries and queries (unit)', () => {
  it('makes a rotation a key.rotated by the owner, with the last four only', () => {
    const entry = auditEntryOf(
      event('key.generated', {
        keyHash: HASH,
        last4: 'Wxyz',
        tier: 'team',
        customerId: 'cus-1',
        subscriptionId: 'sub-1',
        email: 'o@example.test',
        encryptedKey: 'sealed',
        source: 'rotation',
        generation: 2,
        replacesLast4: 'Abcd',
        expiresAt: null,
        previousValidUntil: new Date('2026-11-26T04:46:30.000Z'),
      }),
    );
    expect(entry).to.deep.include({
      action: 'key.rotated',
      actor: 'owner',
      target: 'key …Wxyz',
      subscriptionId: 'sub-1',
      customerId: 'cus-1',
      userId: null,
      at,
    });
    expect(entry.details).to.deep.equal({
      tier: 'team',
      generation: 2,
      replacesLast4: 'Abcd',
      expiresAt: null,
      previousValidUntil: '2026-11-26T04:46:30.000Z',
    });
    // Neither the sealed key nor the e-mail address is kept.
    expect(JSON.stringify(entry)).not.to.include('sealed').and.not.to.include('o@example.test');
  });

  it("gives every replica's refusal of a key with a code in a minute one entry id", () => {
    const data = { keyHash: HASH, subscriptionId: 'sub-1', code: 'EXPIRED' as const, minute: '2026-11-26T04:41:00.000Z' };
    const a = event('key.check-refused', data);
    const b = event('key.check-refused', data);
    expect(a.metadata.eventId).not.to.equal(b.metadata.eventId);
    expect(entryIdOf(a)).to.equal(entryIdOf(b)).and.to.equal(`refused:${HASH}:EXPIRED:2026-11-26T04:41:00.000Z`);
    expect(auditEntryOf(a)).to.deep.include({ actor: `key:${HASH.slice(0, 12)}`, action: 'key.check-refused' });
  });

  it('is append-only: an entry once written is never changed by a later event', () => {
    const login = event('account.logged-in', { userId: 'u-1', method: 'password', subscriptionId: null });
    const first = auditProjection.evolve(null, login);
    expect(first).to.deep.include({ action: 'account.logged-in', actor: 'account:u-1', userId: 'u-1' });
    const other = event('account.password-changed', { userId: 'u-1', tokenVersion: 3 });
    expect(auditProjection.evolve(first, other)).to.equal(first);
  });

  it('names subscription events by the provider, with the tier and end', () => {
    const cancelled = auditEntryOf(
      event('subscription.cancelled', {
        subscriptionId: 'sub-9',
        userId: 'u-9',
        endsAt: new Date('2026-12-31T00:00:00.000Z'),
        email: 'x@example.test',
        name: null,
        reactivateUrl: null,
        providerUpdatedAt: at,
      }),
    );
    expect(cancelled).to.deep.include({ actor: 'provider', subscriptionId: 'sub-9', userId: 'u-9', action: 'subscription.cancelled' });
    expect(cancelled.details).to.deep.equal({ endsAt: '2026-12-31T00:00:00.000Z' });
  });

  it('reads only its own cursors, and pages strictly older than the cursor', () => {
    const cursor = cursorOf({ at, entryId: 'e-5' });
    expect(positionOf(cursor)).to.deep.equal({ at, entryId: 'e-5' });
    expect(positionOf('bm90LWEtY3Vyc29y')).to.equal(null);
    expect(positionOf(Buffer.from('["not a date","x"]').toString('base64url'))).to.equal(null);
    const since = new Date('2025-11-26T00:00:00.000Z');
    const filter = auditFilter([{ subscriptionId: 'sub-1' }], auditQuery.parse({ action: 'key.' }), since, { at, entryId: 'e-5' });
    expect(filter).to.deep.equal({
      $and: [
        { $or: [{ subscriptionId: 'sub-1' }] },
        { at: { $gte: since } },
        { action: { $regex: '^key\\.' } },
        { $or: [{ at: { $lt: at } }, { at, entryId: { $lt: 'e-5' } }] },
      ],
    });
  });

  it('never reads back further than the retention, whatever from says', () => {
    const since = new Date('2025-11-26T00:00:00.000Z');
    const early = auditFilter(
      [{ userId: 'u' }],
      auditQuery.parse({ from: '2020-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }),
      since,
      null,
    );
    expect(early.$and[1]).to.deep.equal({ at: { $gte: since, $lte: new Date('2026-01-01T00:00:00Z') } });
    expect(auditQuery.safeParse({ action: 'key.$where' }).success).to.equal(false);
    expect(auditQuery.safeParse({ limit: '500' }).success).to.equal(false);
  });
});
