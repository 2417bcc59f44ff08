import { expect } from 'chai';
import { newEvent } from '../../../events/envelope.ts';
import type { AccountLoggedIn, AccountSsoLinked } from '../../../services/accounts/events.ts';
import { openFlow, sealFlow, type SsoFlow } from '../../../services/accounts/sso/flow-cookie.ts';
import { openLinkTicket, sealLinkTicket, type LinkTicket } from '../../../services/accounts/sso/link-ticket.ts';
import { identityId } from '../../../services/accounts/sso/provider-identities.ts';
import { SsoRefusal, identityOf, notLinked } from '../../../services/accounts/sso/sso-login.ts';
import { ssoStartQuery } from '../../../services/accounts/sso/sso-input.ts';
import { auditEntryOf } from '../../../services/audit/audit-entry.ts';
import { ssoRefusal } from '../../../services/console/sso-refusals.ts';

const SECRET = 'a-jwt-secret-of-at-least-32-bytes-0123456789';

describe('single sign-on: identities and links (unit)', () => {
  const ticket: LinkTicket = { userId: 'u-1', tokenVersion: 2, binding: 'b'.repeat(43), expiresAt: 2_000_000 };

  it('seals a link ticket this deployment alone opens, and refuses it expired, tampered or foreign', () => {
    const sealed = sealLinkTicket(SECRET, ticket);
    expect(openLinkTicket(SECRET, sealed, 1_000_000)).to.deep.equal(ticket);
    expect(sealed).not.to.include('u-1');
    expect(openLinkTicket(SECRET, sealed, ticket.expiresAt)).to.equal(null);
    expect(openLinkTicket('another-secret-of-at-least-32-bytes-000000', sealed, 1)).to.equal(null);
    const bytes = Buffer.from(sealed, 'base64');
    bytes[bytes.length - 1]! ^= 1;
    expect(openLinkTicket(SECRET, bytes.toString('base64'), 1)).to.equal(null);
    for (const junk of ['', 'x', 'AAAA', '%%%%']) expect(openLinkTicket(SECRET, junk, 1)).to.equal(null);
    // A sealed flow is not a ticket, nor the other way round (each key and label is its own).
    const flow: SsoFlow = { subscriptionId: 's', codeVerifier: 'v', state: 's', nonce: 'n', binding: 'b', expiresAt: 2_000_000 };
    expect(openLinkTicket(SECRET, sealFlow(SECRET, flow).slice(3), 1)).to.equal(null);
  });

  it('keeps a link flow’s account in the sealed flow, and refuses a flow whose link is malformed', () => {
    const flow: SsoFlow = {
      subscriptionId: 'sub-1',
      codeVerifier: 'v'.repeat(43),
      state: 'st',
      nonce: 'no',
      binding: 'b'.repeat(43),
      expiresAt: 2_000_000,
      link: { userId: 'u-1', tokenVersion: 0 },
    };
    expect(openFlow(SECRET, sealFlow(SECRET, flow), 1)).to.deep.equal(flow);
    const bad = { ...flow, link: { userId: 'u-1' } } as unknown as SsoFlow;
    expect(openFlow(SECRET, sealFlow(SECRET, bad), 1)).to.equal(null);
  });

  it('names an identity by its issuer and subject, so that no two pairs share an id', () => {
    expect(identityId('https://idp', 'ana')).to.match(/^[0-9a-f]{64}$/);
    expect(identityId('https://idp', 'ana')).to.equal(identityId('https://idp', 'ana'));
    expect(identityId('https://idp', 'ana')).not.to.equal(identityId('https://idp/', 'ana'));
    expect(identityId('https://idpa', 'b')).not.to.equal(identityId('https://idp', 'ab'));
  });

  it('takes the identity from the ID token, refusing one without iss or sub', () => {
    const claims = { iss: 'https://idp', sub: 'ana-1', aud: 'c', iat: 1, exp: 2 };
    expect(identityOf(claims)).to.deep.equal({ issuer: 'https://idp', subject: 'ana-1' });
    for (const bad of [undefined, { ...claims, sub: '' }, { ...claims, sub: 'x'.repeat(256) }, { ...claims, iss: '' }]) {
      expect(() => identityOf(bad)).to.throw(SsoRefusal);
    }
  });

  it('refuses every sign-on it cannot match with one code and words that do not say whether an account exists', () => {
    const refusal = notLinked();
    expect(refusal.code).to.equal('not_linked');
    expect(refusal.message).to.include('log in the ordinary way and link your team’s sign-on from your account');
    const page = ssoRefusal('not_linked');
    expect(page.status).to.equal(403);
    expect(page.text).to.include("log in the ordinary way and link your team's sign-on");
    for (const text of [refusal.message, page.text]) expect(text).not.to.match(/exists|already has|is taken|no account/i);
    // The old code that told an account existed is gone: it gets the console's generic words.
    expect(ssoRefusal('account_exists').text).to.equal('The sign-on was refused. Start again from the log-in page.');
  });

  it('takes no subscription id at the start: a team is never found by its id', () => {
    const parsed = ssoStartQuery.parse({ subscriptionId: 'sub-1', binding: 'b'.repeat(43) });
    expect(parsed).not.to.have.property('subscriptionId');
    expect(parsed.email).to.equal(undefined);
  });

  it('files a single sign-on’s log-in and a link under the account that was opened (its own log), the team in details', () => {
    const login: AccountLoggedIn = newEvent(
      'account.logged-in',
      { userId: 'u-v', method: 'sso', subscriptionId: 'sub-a' },
      { correlationId: 'c' },
    );
    expect(auditEntryOf(login)).to.deep.include({
      userId: 'u-v',
      subscriptionId: null,
      actor: 'account:u-v',
      details: { method: 'sso', team: 'sub-a' },
    });
    const linked: AccountSsoLinked = newEvent(
      'account.sso-linked',
      { userId: 'u-v', subscriptionId: 'sub-a', issuer: 'https://idp', subject: 'v-1', via: 'link' },
      { correlationId: 'c' },
    );
    expect(auditEntryOf(linked)).to.deep.include({ action: 'account.sso-linked', userId: 'u-v', subscriptionId: null });
    expect(auditEntryOf(linked).details).to.deep.equal({ team: 'sub-a', issuer: 'https://idp', subject: 'v-1', via: 'link' });
  });
});
