import { expect } from 'chai';
import { openKey, sealKey } from '../../../services/console/key-cookie.ts';
import { clearedCookie, cookieHeader, csrfToken, csrfValid, newPreSession, readCookies } from '../../../services/console/session.ts';

const SECRET = 's'.repeat(32);

describe('console session, CSRF and key cookie (unit)', () => {
  it('sets every cookie HttpOnly, Secure, SameSite=Strict on Path=/, and deletes with Max-Age=0', () => {
    expect(cookieHeader('svc_session', 'a.b-c_d')).to.equal('svc_session=a.b-c_d; Path=/; HttpOnly; Secure; SameSite=Strict');
    expect(clearedCookie('svc_key')).to.equal('svc_key=; Path=/; HttpOnly; Secure; SameSite=Strict; Max-Age=0');
    expect(cookieHeader('x', 'v', { maxAge: 3600.7 })).to.match(/; Max-Age=3600$/);
    // A value that could end the attribute list or inject another never gets written.
    expect(() => cookieHeader('svc_session', 'a; Domain=evil.example')).to.throw(/characters a cookie may not/);
    expect(() => cookieHeader('bad name', 'v')).to.throw(/not a token/);
  });

  it('reads cookies, the first of a name winning', () => {
    const cookies = readCookies('svc_session=one; other=x;svc_session=two; junk; =nameless');
    expect(cookies.get('svc_session')).to.equal('one');
    expect(cookies.get('other')).to.equal('x');
    expect(cookies.size).to.equal(2);
    expect(readCookies(undefined).size).to.equal(0);
  });

  it("derives a CSRF token per session that only that session's secret and session accept", () => {
    const token = csrfToken(SECRET, 'session-a');
    expect(token).to.match(/^[\w-]{43}$/);
    expect(csrfToken(SECRET, 'session-a')).to.equal(token);
    expect(csrfValid(SECRET, 'session-a', token)).to.equal(true);
    expect(csrfValid(SECRET, 'session-b', token)).to.equal(false);
    expect(csrfValid('t'.repeat(32), 'session-a', token)).to.equal(false);
    expect(csrfValid(SECRET, 'session-a', `${token}x`)).to.equal(false);
    expect(csrfValid(SECRET, 'session-a', '')).to.equal(false);
    expect(csrfValid(SECRET, 'session-a', undefined)).to.equal(false);
    expect(csrfValid(SECRET, 'session-a', ['x'])).to.equal(false);
    expect(csrfValid(SECRET, undefined, token)).to.equal(false);
    expect(newPreSession()).to.match(/^[\w-]{32}$/);
    expect(newPreSession()).not.to.equal(newPreSession());
  });

  it('seals the API key for one account: opened by it, by no other account, secret or tampered cookie', () => {
    const key = `svc_${'A1b2'.repeat(8)}Z`;
    const sealed = sealKey(SECRET, 'user-1', key);
    expect(sealed).to.match(/^k1\.[\w-]+$/);
    expect(sealed).not.to.include(key.slice(4, 12));
    expect(sealKey(SECRET, 'user-1', key)).not.to.equal(sealed);
    expect(openKey(SECRET, 'user-1', sealed)).to.equal(key);
    expect(openKey(SECRET, 'user-2', sealed)).to.equal(null);
    expect(openKey('t'.repeat(32), 'user-1', sealed)).to.equal(null);
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    raw[raw.length - 1] = (raw.at(-1) ?? 0) ^ 1;
    expect(openKey(SECRET, 'user-1', `k1.${raw.toString('base64url')}`)).to.equal(null);
    expect(openKey(SECRET, 'user-1', undefined)).to.equal(null);
    expect(openKey(SECRET, 'user-1', 'k1.short')).to.equal(null);
    expect(openKey(SECRET, 'user-1', key)).to.equal(null);
    // The sealed value is a valid cookie value.
    expect(() => cookieHeader('svc_key', sealed)).not.to.throw();
  });
});
