import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { newEvent } from '../../../events/envelope.ts';
import {
  VERIFICATION_TTL_MS,
  VerificationLinkError,
  checkVerification,
  issueVerification,
  openVerificationToken,
  verificationTokenHash,
} from '../../../services/accounts/email-verification.ts';
import type { AccountEmailVerified, AccountRegistered, AccountVerificationRequested } from '../../../services/accounts/events.ts';
import { usersProjection } from '../../../services/accounts/users.projection.ts';
import { ownedBy } from '../../../services/keys/key-owner.ts';
import { owedMail, type MailSettings } from '../../../services/mailer/owed-mail.ts';

const key = randomBytes(32);
const email = 'ceo@victim.example';
const settings: MailSettings = {
  keyEncryptionKey: key,
  reactivateUrl: 'https://svc.example/billing',
  pricingUrl: 'https://svc.example/pricing',
  consoleUrl: 'https://console.svc.example',
};
const tokenInLink = (text: string): string => {
  const url = /https:\/\/console\.svc\.example\/verify\?token=([A-Za-z0-9_-]+)/.exec(text);
  if (!url?.[1]) throw new Error('no verification link in the mail');
  return url[1];
};

describe('address verification (unit)', () => {
  it("issues a link whose secret only its own event's address and request open, and whose hash the store keeps", () => {
    const now = new Date('2026-11-28T00:00:00Z');
    const issued = issueVerification(key, email, now);
    expect(issued.stored.expiresAt.getTime() - now.getTime()).to.equal(VERIFICATION_TTL_MS);
    expect(issued.link.expiresAt).to.deep.equal(issued.stored.expiresAt);
    expect(issued.link.requestId).to.equal(issued.stored.requestId);
    const token = openVerificationToken(issued.link, key, email);
    expect(verificationTokenHash(token)).to.equal(issued.stored.tokenHash);
    // Nothing of the secret in what the event or the store hold in the clear.
    expect(JSON.stringify(issued)).not.to.include(token);
    // Copied into another address's event, another request's, or opened with another key: it does not open.
    expect(() => openVerificationToken(issued.link, key, 'eve@attacker.example')).to.throw(VerificationLinkError);
    expect(() => openVerificationToken({ ...issued.link, requestId: issueVerification(key, email).link.requestId }, key, email)).to.throw(
      VerificationLinkError,
    );
    expect(() => openVerificationToken(issued.link, randomBytes(32), email)).to.throw(VerificationLinkError);
  });

  it('checks a link: its own current secret before expiry only; anything else is one answer', () => {
    const now = new Date('2026-11-28T00:00:00Z');
    const issued = issueVerification(key, email, now);
    const token = openVerificationToken(issued.link, key, email);
    const other = openVerificationToken(issueVerification(key, email, now).link, key, email);
    expect(checkVerification(issued.stored, token, now)).to.equal('ok');
    expect(checkVerification(issued.stored, token, new Date(now.getTime() + VERIFICATION_TTL_MS - 1))).to.equal('ok');
    expect(checkVerification(issued.stored, token, new Date(now.getTime() + VERIFICATION_TTL_MS))).to.equal('expired');
    // Another link (replaced by a resend, or another account's), a used one (the store holds none), forged or malformed.
    expect(checkVerification(issued.stored, other, now)).to.equal('invalid');
    expect(checkVerification(null, token, now)).to.equal('invalid');
    expect(checkVerification(undefined, token, now)).to.equal('invalid');
    expect(checkVerification(issued.stored, 'A'.repeat(43), now)).to.equal('invalid');
    expect(checkVerification(issued.stored, `${token}x`, now)).to.equal('invalid');
    expect(checkVerification(issued.stored, issued.stored.tokenHash, now)).to.equal('invalid');
  });

  it('an unlinked subscription under an address belongs only to an account that verified it; one linked by id keeps its account', () => {
    const unlinked = { userId: null, email: 'CEO@victim.example ' };
    const squatter = { userId: 'u-squatter', email };
    expect(ownedBy(unlinked, squatter)).to.equal(false);
    expect(ownedBy(unlinked, { ...squatter, emailVerifiedAt: null })).to.equal(false);
    expect(ownedBy(unlinked, { ...squatter, emailVerifiedAt: new Date() })).to.equal(true);
    expect(ownedBy(unlinked, { userId: 'u2', email: 'other@victim.example', emailVerifiedAt: new Date() })).to.equal(false);
    // Checkout by a signed-in account names it: linked by id, verified or not; nobody else by e-mail.
    const linked = { userId: 'u-buyer', email };
    expect(ownedBy(linked, { userId: 'u-buyer', email })).to.equal(true);
    expect(ownedBy(linked, { ...squatter, emailVerifiedAt: new Date() })).to.equal(false);
  });

  it('the users projection records the first verification, and a replay gives the same', () => {
    const userId = '7d7c2c8e-6a55-4d8e-9f0e-8a7f3e2b1c00';
    const registered: AccountRegistered = newEvent('account.registered', { userId, email, name: 'Ceo', verification: null });
    const verified: AccountEmailVerified = newEvent('account.email-verified', { userId, email });
    const again: AccountEmailVerified = newEvent(
      'account.email-verified',
      { userId, email },
      { occurredAt: new Date(Date.now() + 60_000) },
    );
    const once = usersProjection.evolve(usersProjection.evolve(null, registered), verified);
    expect(once?.emailVerifiedAt).to.deep.equal(verified.metadata.occurredAt);
    expect(usersProjection.evolve(once, again)?.emailVerifiedAt).to.deep.equal(verified.metadata.occurredAt);
    expect(usersProjection.evolve(null, registered)?.emailVerifiedAt).to.equal(undefined);
  });

  it('the welcome e-mail carries the link (a page of the console), and a resend mails a new one; the secret is only in the mail', () => {
    const userId = '7d7c2c8e-6a55-4d8e-9f0e-8a7f3e2b1c01';
    const issued = issueVerification(key, email);
    const registered: AccountRegistered = newEvent('account.registered', { userId, email, name: 'Ceo', verification: issued.link });
    const welcome = owedMail(registered, settings);
    expect(welcome?.effect).to.equal(`welcome-email:${userId}`);
    expect(welcome?.mail.to).to.equal(email);
    const token = tokenInLink(welcome!.mail.text);
    expect(verificationTokenHash(token)).to.equal(issued.stored.tokenHash);
    expect(welcome!.mail.html).to.include(`/verify?token=${token}`);
    expect(JSON.stringify(registered)).not.to.include(token);

    const resent = issueVerification(key, email);
    const requested: AccountVerificationRequested = newEvent('account.verification-requested', {
      userId,
      email,
      name: 'Ceo',
      ...resent.link,
    });
    const mail = owedMail(requested, settings);
    expect(mail?.effect).to.equal(`verification-email:${resent.link.requestId}`);
    expect(verificationTokenHash(tokenInLink(mail!.mail.text))).to.equal(resent.stored.tokenHash);

    // An account from before verification: its welcome, without a link.
    const old = owedMail(newEvent('account.registered', { userId, email, name: 'Ceo' }), settings);
    expect(old!.mail.text).not.to.include('/verify');
    // A blob moved into another account's event does not open: dead-lettered, never mailed to that address.
    const moved: AccountVerificationRequested = newEvent('account.verification-requested', {
      userId,
      email: 'eve@attacker.example',
      name: 'Eve',
      ...resent.link,
    });
    expect(() => owedMail(moved, settings)).to.throw(VerificationLinkError);
  });
});
