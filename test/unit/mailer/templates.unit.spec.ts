import { expect } from 'chai';
import {
  cancellationMail,
  formatUtcDate,
  keyIssuedMail,
  paymentFailedMail,
  subscriptionEndedMail,
  welcomeMail,
} from '../../../services/mailer/templates.ts';
import type { Mail } from '../../../services/mailer/transport.ts';

const evil = '<script>alert("x")</script>';
const email = 'ada@example.com';
const apiKey = `svc_${'k'.repeat(29)}AbC9`;
// A query string with & proves links are attribute-escaped in HTML and left plain in text.
const link = 'https://billing.example.com/sub/42?sig=a&b=c';
const endsAt = new Date('2026-12-21T15:30:00.000Z');

function expectEscaped(mail: Mail): void {
  expect(mail.html).not.to.include('<script>');
  expect(mail.html).to.include('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
  expect(mail.text).to.include(evil);
}

function expectLink(mail: Mail, url: string): void {
  expect(mail.text).to.include(url);
  expect(mail.html).to.include(`href="${url.replaceAll('&', '&amp;')}"`);
  expect(mail.html).not.to.include(url.includes('&') ? url : '\u0000');
}

describe('mail templates (unit)', () => {
  it('formats dates as day, month name and year in UTC', () => {
    expect(formatUtcDate(endsAt)).to.equal('21 December 2026');
    expect(formatUtcDate(new Date('2027-01-01T00:30:00+01:00'))).to.equal('31 December 2026');
    expect(() => formatUtcDate(new Date('x'))).to.throw(RangeError);
  });

  it('keeps the welcome mail', () => {
    const mail = welcomeMail({ userId: 'u1', email, name: 'Ada' });
    expect(mail.messageId).to.equal('<welcome.u1@svc.local>');
  });

  describe('key issued', () => {
    const mail = keyIssuedMail({ email, name: evil, apiKey, tier: 'pro', subscriptionId: 'sub_1' });

    it('shows the key once in text and HTML', () => {
      expect(mail.to).to.equal(email);
      expect(mail.subject).to.equal('Your svc API key');
      expect(mail.messageId).to.equal('<key.sub_1@svc.local>');
      expect(mail.text).to.include(apiKey);
      expect(mail.html).to.include(`<code>${apiKey}</code>`);
      expect(mail.text.split(apiKey)).to.have.length(2);
      expect(mail.text).to.include('Pro');
    });

    it('escapes the name in HTML', () => expectEscaped(mail));

    it('greets without a name', () => {
      expect(keyIssuedMail({ email, name: null, apiKey, tier: 'team', subscriptionId: 's' }).text).to.match(/^Hello,\n/);
    });
  });

  describe('cancellation', () => {
    const mail = cancellationMail({ email, name: evil, subscriptionId: 'sub_2', endsAt, reactivateUrl: link });

    it('states the end of the paid period and the reactivation link', () => {
      expect(mail.to).to.equal(email);
      expect(mail.subject).to.include('21 December 2026');
      expect(mail.messageId).to.equal(`<cancelled.sub_2.${endsAt.getTime()}@svc.local>`);
      expect(mail.text).to.include('21 December 2026');
      expect(mail.html).to.include('21 December 2026');
      expectLink(mail, link);
    });

    it('escapes the name in HTML', () => expectEscaped(mail));

    it('gives a new message id for a new end date', () => {
      const later = cancellationMail({
        email,
        name: null,
        subscriptionId: 'sub_2',
        endsAt: new Date('2027-01-21T00:00:00Z'),
        reactivateUrl: link,
      });
      expect(later.messageId).not.to.equal(mail.messageId);
    });
  });

  describe('payment failed', () => {
    const mail = paymentFailedMail({ email, name: evil, subscriptionId: 'sub_3', invoiceId: 'inv_9', updatePaymentUrl: link });

    it('asks to update the payment method, with the link', () => {
      expect(mail.to).to.equal(email);
      expect(mail.subject).to.match(/payment/i);
      expect(mail.messageId).to.equal('<payment-failed.inv_9@svc.local>');
      expect(mail.text).to.match(/update your payment method/);
      expect(mail.html).to.match(/update your payment method/);
      expectLink(mail, link);
    });

    it('escapes the name and the invoice id in HTML', () => {
      expectEscaped(mail);
      const odd = paymentFailedMail({ email, name: null, subscriptionId: 's', invoiceId: '<i>', updatePaymentUrl: link });
      expect(odd.html).to.include('&lt;i&gt;').and.not.include('<i>');
    });
  });

  describe('subscription ended', () => {
    const mail = subscriptionEndedMail({ email, name: evil, subscriptionId: 'sub_4', endsAt, pricingUrl: 'http://localhost:8081/pricing' });

    it('says the key is on the free tier now, with the upgrade link', () => {
      expect(mail.to).to.equal(email);
      expect(mail.subject).to.match(/ended/);
      expect(mail.messageId).to.equal(`<ended.sub_4.${endsAt.getTime()}@svc.local>`);
      expect(mail.text).to.include('free tier').and.include('21 December 2026');
      expect(mail.html).to.include('free tier').and.include('21 December 2026');
      expectLink(mail, 'http://localhost:8081/pricing');
    });

    it('escapes the name in HTML', () => expectEscaped(mail));
  });

  it('refuses links that are not http(s)', () => {
    for (const bad of ['javascript:alert(1)', 'data:text/html,x', 'ftp://x.example/', '/relative', 'not a url']) {
      expect(() => cancellationMail({ email, name: null, subscriptionId: 's', endsAt, reactivateUrl: bad }), bad).to.throw(/reactivateUrl/);
      expect(() => paymentFailedMail({ email, name: null, subscriptionId: 's', invoiceId: 'i', updatePaymentUrl: bad }), bad).to.throw(
        /updatePaymentUrl/,
      );
      expect(() => subscriptionEndedMail({ email, name: null, subscriptionId: 's', endsAt, pricingUrl: bad }), bad).to.throw(/pricingUrl/);
    }
  });

  it('escapes quotes in a link so it cannot break out of the href attribute', () => {
    const mail = cancellationMail({ email, name: null, subscriptionId: 's', endsAt, reactivateUrl: 'https://x.example/a"onmouseover="b' });
    expect(mail.html).not.to.match(/"onmouseover=/);
  });
});
