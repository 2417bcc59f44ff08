import { expect } from 'chai';
import type { ProviderEvent, ProviderInvoice, ProviderSubscription } from '../../../services/billing/provider-event.ts';
import { parseProviderEvent, readEnvelope, subscriptionIdOf, type ParsedPayload } from '../../../services/billing/provider-payload.ts';
import { fixture, invoicePayload, subscriptionPayload, type JsonObject } from '../../support/lemonsqueezy.ts';

const FALLBACK = 'f'.repeat(64);

function event(parsed: ParsedPayload): ProviderEvent {
  if ('error' in parsed) throw new Error(`expected an event, got error: ${parsed.error}`);
  if ('ignored' in parsed) throw new Error(`expected an event, got ignored: ${parsed.ignored}`);
  return parsed;
}
const subscription = (parsed: ParsedPayload): ProviderSubscription => {
  const e = event(parsed);
  if (e.kind !== 'subscription') throw new Error(`expected a subscription, got ${e.kind}`);
  return e;
};
const invoice = (parsed: ParsedPayload): ProviderInvoice => {
  const e = event(parsed);
  if (e.kind !== 'invoice') throw new Error(`expected an invoice, got ${e.kind}`);
  return e;
};
const errorOf = (parsed: ParsedPayload): string => {
  if (!('error' in parsed)) throw new Error(`expected an error, got ${JSON.stringify(parsed)}`);
  return parsed.error;
};
/** A deep copy with one path changed (undefined removes it). */
function withField(payload: JsonObject, path: string, value: unknown): JsonObject {
  const copy = structuredClone(payload) as Record<string, unknown>;
  const keys = path.split('.');
  let node = copy;
  for (const k of keys.slice(0, -1)) node = node[k] as Record<string, unknown>;
  const last = keys[keys.length - 1]!;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return copy as JsonObject;
}

describe('provider payload parsing (unit)', () => {
  describe('the shared samples', () => {
    it('maps subscription_created to a ProviderSubscription, numeric ids as strings and dates as Dates', () => {
      expect(parseProviderEvent(fixture('subscription_created').json, FALLBACK)).to.deep.equal({
        kind: 'subscription',
        eventName: 'subscription_created',
        webhookId: '7c1f6a2e-4b0e-4a8e-9a43-2f7d6b8c1e90',
        subscriptionId: '184220',
        customerId: '2977411',
        userId: '3f2b8a64-1c7d-4e2a-9b5f-0d6e8c4a2b71',
        email: 'ada@example.com',
        name: 'Ada Lovelace',
        variantId: '301789',
        status: 'active',
        renewsAt: new Date('2026-12-21T10:04:11.000Z'),
        endsAt: null,
        updatedAt: new Date('2026-11-21T10:04:11.000Z'),
        customerPortalUrl: 'https://example.lemonsqueezy.com/billing?expires=1790000000&signature=bb',
        updatePaymentUrl: 'https://example.lemonsqueezy.com/subscription/184220/payment-details?expires=1790000000&signature=aa',
      } satisfies ProviderSubscription);
    });

    it('maps subscription_payment_success to a ProviderInvoice naming its subscription', () => {
      expect(parseProviderEvent(fixture('subscription_payment_success').json, FALLBACK)).to.deep.equal({
        kind: 'invoice',
        eventName: 'subscription_payment_success',
        webhookId: '0b8d2f51-93c4-4a51-8e0e-5c1a7f3d9e22',
        invoiceId: '1022871',
        subscriptionId: '184220',
        customerId: '2977411',
        userId: '3f2b8a64-1c7d-4e2a-9b5f-0d6e8c4a2b71',
        email: 'ada@example.com',
        name: 'Ada Lovelace',
        status: 'paid',
        updatedAt: new Date('2026-12-21T10:04:18.000Z'),
      } satisfies ProviderInvoice);
    });
  });

  describe('the other subscription events', () => {
    it('subscription_updated carries the new variant and status', () => {
      const s = subscription(
        parseProviderEvent(
          subscriptionPayload('subscription_updated', { attributes: { variant_id: 301790, status: 'past_due' } }),
          FALLBACK,
        ),
      );
      expect(s).to.include({ eventName: 'subscription_updated', variantId: '301790', status: 'past_due' });
    });

    it('subscription_cancelled carries ends_at (the end of the paid period)', () => {
      const s = subscription(parseProviderEvent(subscriptionPayload('subscription_cancelled'), FALLBACK));
      expect(s).to.include({ eventName: 'subscription_cancelled', status: 'cancelled' });
      expect(s.endsAt).to.deep.equal(new Date('2026-12-21T10:04:11.000Z'));
    });

    it('subscription_resumed is active again with no end', () => {
      const s = subscription(parseProviderEvent(subscriptionPayload('subscription_resumed'), FALLBACK));
      expect(s).to.include({ eventName: 'subscription_resumed', status: 'active', endsAt: null });
      expect(s.renewsAt).to.be.instanceOf(Date);
    });

    it('subscription_expired carries its status and end', () => {
      const s = subscription(
        parseProviderEvent(
          subscriptionPayload('subscription_expired', { attributes: { ends_at: '2027-01-21T10:04:11.000000Z' } }),
          FALLBACK,
        ),
      );
      expect(s).to.include({ eventName: 'subscription_expired', status: 'expired' });
      expect(s.endsAt).to.deep.equal(new Date('2027-01-21T10:04:11.000Z'));
    });

    it('subscription_payment_failed is an invoice of the given subscription', () => {
      const i = invoice(
        parseProviderEvent(invoicePayload('subscription_payment_failed', { subscriptionId: 999, invoiceId: 5555 }), FALLBACK),
      );
      expect(i).to.include({ eventName: 'subscription_payment_failed', subscriptionId: '999', invoiceId: '5555', status: 'pending' });
    });

    it('keeps milliseconds and accepts a numeric offset', () => {
      const s = subscription(
        parseProviderEvent(
          subscriptionPayload('subscription_updated', { attributes: { updated_at: '2026-11-21T12:04:11.123456+02:00' } }),
          FALLBACK,
        ),
      );
      expect(s.updatedAt.toISOString()).to.equal('2026-11-21T10:04:11.123Z');
    });

    it('takes the fallback webhook id when meta.webhook_id is absent', () => {
      expect(event(parseProviderEvent(subscriptionPayload('subscription_updated', { webhookId: null }), FALLBACK)).webhookId).to.equal(
        FALLBACK,
      );
      expect(event(parseProviderEvent(subscriptionPayload('subscription_updated', { webhookId: 'wh-1' }), FALLBACK)).webhookId).to.equal(
        'wh-1',
      );
    });

    it('has no user without custom_data.user_id, and accepts a numeric one', () => {
      expect(event(parseProviderEvent(subscriptionPayload('subscription_created', { customData: null }), FALLBACK)).userId).to.equal(null);
      expect(event(parseProviderEvent(subscriptionPayload('subscription_created', { userId: null }), FALLBACK)).userId).to.equal(null);
      expect(
        event(parseProviderEvent(invoicePayload('subscription_payment_success', { customData: { user_id: 42 } }), FALLBACK)).userId,
      ).to.equal('42');
    });

    it('maps missing urls, a missing portal link and a null user name to null', () => {
      const noUrls = subscription(
        parseProviderEvent(subscriptionPayload('subscription_updated', { attributes: { urls: undefined, user_name: null } }), FALLBACK),
      );
      expect(noUrls).to.include({ customerPortalUrl: null, updatePaymentUrl: null, name: null });
      const partial = subscription(
        parseProviderEvent(
          subscriptionPayload('subscription_updated', { attributes: { urls: { update_payment_method: 'https://pay.example/u' } } }),
          FALLBACK,
        ),
      );
      expect(partial).to.include({ customerPortalUrl: null, updatePaymentUrl: 'https://pay.example/u' });
    });
  });

  describe('events billing does not act on', () => {
    const ignored: [string, JsonObject][] = [
      ['order_created', { meta: { event_name: 'order_created' }, data: { type: 'orders', id: '1', attributes: {} } }],
      ['subscription_paused', subscriptionPayload('subscription_paused')],
      ['subscription_unpaused', subscriptionPayload('subscription_unpaused')],
      ['subscription_payment_recovered', invoicePayload('subscription_payment_recovered')],
      ['subscription_payment_refunded', invoicePayload('subscription_payment_refunded')],
      ['license_key_created', { meta: { event_name: 'license_key_created' } }],
    ];
    for (const [name, payload] of ignored) {
      it(`${name} is { ignored }, whatever its data`, () => {
        expect(parseProviderEvent(payload, FALLBACK)).to.deep.equal({ ignored: name });
      });
    }
  });

  describe('a wrong shape', () => {
    const sub = subscriptionPayload('subscription_created');
    const inv = invoicePayload('subscription_payment_failed');
    const cases: [string, unknown, RegExp][] = [
      ['a body that is not an object', [1, 2], /^body must be a JSON object$/],
      ['a null body', null, /^body must be a JSON object$/],
      ['no meta', { data: {} }, /^meta is required$/],
      ['no meta.event_name', withField(sub, 'meta.event_name', undefined), /^meta\.event_name is required$/],
      ['a numeric meta.event_name', withField(sub, 'meta.event_name', 7), /^meta\.event_name must be a non-empty string$/],
      ['an empty meta.event_name', withField(sub, 'meta.event_name', ''), /^meta\.event_name must be a non-empty string$/],
      ['an empty webhook_id', withField(sub, 'meta.webhook_id', ''), /^meta\.webhook_id must be/],
      ['no data', withField(sub, 'data', undefined), /^subscription_created: data is required$/],
      [
        'an invoice as a subscription event',
        withField(sub, 'data.type', 'subscription-invoices'),
        /^subscription_created: data\.type must be "subscriptions"$/,
      ],
      [
        'a subscription as an invoice event',
        withField(inv, 'data.type', 'subscriptions'),
        /^subscription_payment_failed: data\.type must be "subscription-invoices"$/,
      ],
      ['no data.id', withField(sub, 'data.id', undefined), /: data\.id is required$/],
      [
        'a fractional id',
        withField(sub, 'data.attributes.customer_id', 1.5),
        /: data\.attributes\.customer_id must be a string or integer id$/,
      ],
      ['no user_email', withField(sub, 'data.attributes.user_email', undefined), /: data\.attributes\.user_email is required$/],
      ['no variant_id', withField(sub, 'data.attributes.variant_id', undefined), /: data\.attributes\.variant_id is required$/],
      ['no status', withField(sub, 'data.attributes.status', undefined), /: data\.attributes\.status is required$/],
      ['no updated_at', withField(sub, 'data.attributes.updated_at', undefined), /: data\.attributes\.updated_at is required$/],
      [
        'a non-date renews_at',
        withField(sub, 'data.attributes.renews_at', 'next month'),
        /: data\.attributes\.renews_at must be an ISO 8601 date-time/,
      ],
      [
        'a date without a time zone',
        withField(sub, 'data.attributes.ends_at', '2026-12-21T10:04:11'),
        /: data\.attributes\.ends_at must be an ISO 8601 date-time/,
      ],
      ['urls that are not an object', withField(sub, 'data.attributes.urls', 'x'), /: data\.attributes\.urls must be an object$/],
      ['a custom_data.user_id object', withField(sub, 'meta.custom_data.user_id', { id: 1 }), /: meta\.custom_data\.user_id must be/],
      [
        'an invoice without subscription_id',
        withField(inv, 'data.attributes.subscription_id', undefined),
        /^subscription_payment_failed: data\.attributes\.subscription_id is required$/,
      ],
    ];
    for (const [what, body, message] of cases) {
      it(`${what} → { error } naming the field`, () => {
        expect(errorOf(parseProviderEvent(body, FALLBACK))).to.match(message);
      });
    }

    it('never echoes the offending value', () => {
      const secretish = 'not-a-date-ada@example.com';
      expect(errorOf(parseProviderEvent(withField(sub, 'data.attributes.updated_at', secretish), FALLBACK))).not.to.include(secretish);
    });
  });

  describe('readEnvelope and subscriptionIdOf', () => {
    it('read the event name, webhook id and subscription of any event', () => {
      expect(
        readEnvelope(invoicePayload('subscription_payment_recovered', { webhookId: 'w-9', subscriptionId: 77 }), FALLBACK),
      ).to.deep.equal({
        eventName: 'subscription_payment_recovered',
        webhookId: 'w-9',
        subscriptionId: '77',
      });
      expect(readEnvelope({ meta: { event_name: 'order_created' }, data: { type: 'orders', id: 3 } }, FALLBACK)).to.deep.equal({
        eventName: 'order_created',
        webhookId: FALLBACK,
        subscriptionId: null,
      });
    });

    const ids: [string, unknown, string | null][] = [
      ['a subscription', subscriptionPayload('subscription_paused', { subscriptionId: '123' }), '123'],
      ['an invoice', invoicePayload('subscription_payment_success', { subscriptionId: 456 }), '456'],
      ['an order', { data: { type: 'orders', id: '9', attributes: { subscription_id: 1 } } }, null],
      ['no data', { meta: {} }, null],
      ['a string', 'subscriptions', null],
      ['null', null, null],
      ['an object id', { data: { type: 'subscriptions', id: { x: 1 } } }, null],
    ];
    for (const [what, body, expected] of ids) {
      it(`subscriptionIdOf ${what} is ${String(expected)}`, () => {
        expect(subscriptionIdOf(body)).to.equal(expected);
      });
    }
  });
});
