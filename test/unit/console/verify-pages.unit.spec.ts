import { expect } from 'chai';
import { accountPage } from '../../../services/console/pages/account.page.ts';
import { verifyRefusedPage, verifySignedInPage, verifySignedOutPage } from '../../../services/console/pages/verify.page.ts';
import { verifyRefusal } from '../../../services/console/verify-pages.routes.ts';

const me = (emailVerified: boolean) => ({
  id: 'u1',
  email: 'ada@example.com',
  name: 'Ada',
  tier: 'free' as const,
  created_at: '2026-11-28T00:00:00.000Z',
  emailVerified,
});
const token = 'A'.repeat(43);

describe('the address verification pages (unit)', () => {
  it('the account page says an unverified address waits, and offers the resend form with the CSRF token', () => {
    const unverified = accountPage({ me: me(false), csrf: 'csrf-1' });
    expect(unverified).to.include('data-unverified');
    expect(unverified).to.include('(not verified)');
    expect(unverified).to.match(/<form method="post" action="\/account\/verify\/resend"[\s\S]*name="csrf" value="csrf-1"/);
    expect(unverified).to.include('a subscription bought with it without logging in waits');
    const verified = accountPage({ me: me(true), csrf: 'csrf-1' });
    expect(verified).not.to.include('data-unverified');
    expect(verified).not.to.include('/account/verify/resend');
  });

  it('the link page confirms only by a POST with the CSRF token; signed out, it logs in and comes back', () => {
    const signedIn = verifySignedInPage({ signedIn: { name: 'Ada', csrf: 'csrf-2' }, email: 'ada@example.com', token });
    expect(signedIn).to.match(/<form method="post" action="\/verify"[\s\S]*name="csrf" value="csrf-2"[\s\S]*name="token" value="A{43}"/);
    const signedOut = verifySignedOutPage({ token, csrf: 'pre-1' });
    expect(signedOut).to.include(`name="next" value="/verify?token=${token}"`);
    expect(signedOut).to.include('action="/login"');
  });

  it('a refusal says what to do without telling whose link it was', () => {
    expect(verifyRefusal(410, 'EXPIRED')).to.match(/expired/);
    const invalid = verifyRefusal(400, 'INVALID_LINK');
    expect(invalid).to.match(/used, replaced by a newer one, or is for another account/);
    expect(verifyRefusal(400, undefined)).to.equal(invalid);
    expect(verifyRefusedPage({ text: '<b>' })).to.include('&lt;b&gt;');
  });
});
