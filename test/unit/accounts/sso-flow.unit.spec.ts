import { expect } from 'chai';
import { domainOf, emailInDomains } from '../../../services/accounts/sso/email-domain.ts';
import { FLOW_COOKIE, flowCookieHeader, openFlow, sealFlow, type SsoFlow } from '../../../services/accounts/sso/flow-cookie.ts';

const SECRET = 'a-jwt-secret-of-at-least-32-bytes-0123456789';

describe('single sign-on: the sealed flow cookie (unit)', () => {
  const flow: SsoFlow = { subscriptionId: 'sub-1', codeVerifier: 'v'.repeat(43), state: 'state-1', nonce: 'nonce-1', expiresAt: 2_000_000 };

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
