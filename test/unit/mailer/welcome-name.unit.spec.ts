import { expect } from 'chai';
import { cancellationMail, welcomeMail } from '../../../services/mailer/templates.ts';

// Names reach these mails from events written before sign-up cleaned them, and from the payment
// provider: the templates clean them again rather than trust the log.
describe('names in mails (unit)', () => {
  const email = 'ada@example.com';

  it('keeps line breaks and control characters out of the welcome subject and body', () => {
    const mail = welcomeMail({ userId: 'u1', email, name: 'Eve\r\nBcc: victim\u0000\u202e' });
    expect(mail.subject).to.equal('Welcome to svc, Eve Bcc: victim');
    expect(mail.text.split('\n')[0]).to.equal('Hello Eve Bcc: victim,');
    expect(mail.html).to.include('Hello Eve Bcc: victim,');
  });

  it('caps a long name at 100 characters', () => {
    const mail = welcomeMail({ userId: 'u1', email, name: 'A'.repeat(5000) });
    expect(mail.subject).to.equal(`Welcome to svc, ${'A'.repeat(100)}`);
    expect(mail.text.length).to.be.below(500);
  });

  it('leaves out a name that carries a link, a domain or an address, instead of delivering it', () => {
    for (const name of ['Win big at https://evil.example/x', 'visit evil.com now', 'www.evil.example', 'mail boss@evil.example']) {
      const welcome = welcomeMail({ userId: 'u1', email, name });
      expect(welcome.subject, name).to.equal('Welcome to svc');
      expect(welcome.text, name).to.match(/^Hello,\n/);
      expect(welcome.text + welcome.html, name).not.to.match(/evil/);
      const cancelled = cancellationMail({
        email,
        name,
        subscriptionId: 's',
        endsAt: new Date('2026-12-21T00:00:00Z'),
        reactivateUrl: 'https://svc.example/billing',
      });
      expect(cancelled.text + cancelled.html, name).not.to.match(/evil/);
    }
  });
});
