import { expect } from 'chai';
import { domainOf, emailInDomains } from '../../../services/accounts/sso/email-domain.ts';
import { SsoRefusal, displayNameOf, verifiedEmail } from '../../../services/accounts/sso/sso-login.ts';
import { ssoRefusal } from '../../../services/console/sso-refusals.ts';
import { FLOW_COOKIE, flowCookieHeader, openFlow, sealFlow, type SsoFlow } from '../../../services/accounts/sso/flow-cookie.ts';

const SECRET = 'a-jwt-secret-of-at-least-32-bytes-0123456789';

describe('single sign-on: the sealed flow cookie (unit)', () => {
  const flow: SsoFlow = {
    subscriptionId: 'sub-1',
    codeVerifier: 'v'.repeat(43),
    state: 'state-1',
    nonce: 'nonce-1',
    binding: 'b'.repeat(43),
    expiresAt: 2_000_000,
  };

  it('opens what it sealed, and the browser holds none of it in clear', () => {
    const sealed = sealFlow(SECRET, flow);
    expect(openFlow(SECRET, sealed, 1_000_000)).to.deep.equal(flow);
    for (const clear of [flow.codeVerifier, flow.state, flow.nonce, flow.subscriptionId]) expect(sealed).not.to.include(clear);
    // A fresh iv each time: two seals of one flow differ.
    expect(sealFlow(SECRET, flow)).not.to.equal(sealed);
  });

  it('refuses an expired flow, another deployment’s, a tampered one, and garbage', () => {
    const sealed = sealFlow(SECRET, flow);
    expect(openFlow(SECRET, sealed, flow.expiresAt)).to.equal(null);
    expect(openFlow('another-secret-of-at-least-32-bytes-000000', sealed, 1)).to.equal(null);
    const body = Buffer.from(sealed.slice(3), 'base64url');
    body[body.length - 1]! ^= 1;
    expect(openFlow(SECRET, `f1.${body.toString('base64url')}`, 1)).to.equal(null);
    for (const junk of [undefined, '', 'f1.', 'f1.AAAA', `f2.${sealed.slice(3)}`, sealed.slice(3)])
      expect(openFlow(SECRET, junk, 1)).to.equal(null);
  });

  it('is an HttpOnly, Secure, SameSite=Lax cookie on the callback path only, ten minutes at most', () => {
    const header = flowCookieHeader('f1.x', 600);
    expect(header).to.equal(`${FLOW_COOKIE}=f1.x; Path=/auth/sso/callback; HttpOnly; Secure; SameSite=Lax; Max-Age=600`);
    expect(flowCookieHeader('', 0)).to.include('Max-Age=0');
  });
});

describe('single sign-on: e-mail domains (unit)', () => {
  it('takes the part after the last @, lower-cased', () => {
    expect(domainOf('Ana@ACME.test')).to.equal('acme.test');
    expect(domainOf('"a@b"@acme.test')).to.equal('acme.test');
    for (const bad of ['ana', '@acme.test', 'ana@']) expect(domainOf(bad)).to.equal(null);
  });

  it('matches a configured domain exactly: no subdomain, no suffix trick', () => {
    const domains = ['acme.test', 'acme-labs.test'];
    expect(emailInDomains('ana@acme.test', domains)).to.equal(true);
    expect(emailInDomains('ana@ACME-labs.test', domains)).to.equal(true);
    expect(emailInDomains('ana@eu.acme.test', domains)).to.equal(false);
    expect(emailInDomains('ana@acme.test.evil.test', domains)).to.equal(false);
    expect(emailInDomains('ana@notacme.test', domains)).to.equal(false);
    expect(emailInDomains('acme.test', domains)).to.equal(false);
  });
});

describe('single sign-on: what the ID token must vouch for (unit)', () => {
  const token = (claims: Record<string, unknown>) => ({ iss: 'https://idp', sub: 's', aud: 'c', iat: 1, exp: 2, ...claims });
  const code = (f: () => unknown): string | null => {
    try {
      f();
      return null;
    } catch (err) {
      return err instanceof SsoRefusal ? err.code : 'not a refusal';
    }
  };

  it('takes a verified address of a team domain, normalised', () => {
    expect(verifiedEmail(token({ email: ' Ana@ACME.test ', email_verified: true }), ['acme.test'])).to.equal('ana@acme.test');
  });

  it('refuses a missing address, one not verified (only a literal true counts), and one of another domain', () => {
    expect(code(() => verifiedEmail(token({ email_verified: true }), ['acme.test']))).to.equal('email_missing');
    expect(code(() => verifiedEmail(undefined, ['acme.test']))).to.equal('email_missing');
    for (const verified of [false, 'true', 1, undefined])
      expect(
        code(() => verifiedEmail(token({ email: 'ana@acme.test', email_verified: verified }), ['acme.test'])),
        String(verified),
      ).to.equal('email_unverified');
    expect(code(() => verifiedEmail(token({ email: 'ana@eu.acme.test', email_verified: true }), ['acme.test']))).to.equal('wrong_domain');
  });

  it('names the account from the token when a sign-up would take the name, else from the address', () => {
    expect(displayNameOf(token({ name: '  Ana  Lima ' }), 'ana@acme.test')).to.equal('Ana Lima');
    expect(displayNameOf(token({ name: 'visit evil.example' }), 'ana@acme.test')).to.equal('ana');
    expect(displayNameOf(token({}), 'ana.lima@acme.test')).to.equal('ana lima');
    expect(displayNameOf(token({ name: 42 }), '+@acme.test')).to.equal('Team member');
  });

  it('gives the console a page for every refusal, with its status, and never words from the URL', () => {
    expect(ssoRefusal('email_unverified')).to.deep.include({ status: 403 });
    expect(ssoRefusal('state_mismatch').status).to.equal(400);
    expect(ssoRefusal('<script>alert(1)</script>').text).not.to.include('script');
    expect(ssoRefusal('constructor').status).to.equal(400);
  });
});
