import { expect } from 'chai';
import { classifySmtpFailure } from '../../../services/mailer/smtp-errors.ts';
import { SMTP_TIMEOUTS } from '../../../services/mailer/transport.ts';

const smtpError = (fields: Record<string, unknown>) => Object.assign(new Error('smtp failure: rcpt@example.test said no'), fields);

describe('SMTP failure classification (unit)', () => {
  it('a 5xx reply is permanent: the same e-mail would be refused forever', () => {
    expect(classifySmtpFailure(smtpError({ code: 'EENVELOPE', responseCode: 550, command: 'RCPT TO' }))).to.deep.equal({
      kind: 'permanent',
      reason: 'EENVELOPE, reply 550, to RCPT TO',
    });
    expect(classifySmtpFailure(smtpError({ code: 'EMESSAGE', responseCode: 554, command: 'DATA' })).kind).to.equal('permanent');
  });

  it('an envelope or message the client itself refuses is permanent', () => {
    expect(classifySmtpFailure(smtpError({ code: 'EENVELOPE' })).kind).to.equal('permanent');
  });

  it('a 4xx reply and connection problems are transient', () => {
    expect(classifySmtpFailure(smtpError({ code: 'EENVELOPE', responseCode: 451, command: 'RCPT TO' })).kind).to.equal('transient');
    for (const code of ['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ETLS'])
      expect(classifySmtpFailure(smtpError({ code })).kind, code).to.equal('transient');
  });

  it('a failed login is our configuration, not the message: waited out, not dead-lettered', () => {
    expect(classifySmtpFailure(smtpError({ code: 'EAUTH', responseCode: 535, command: 'AUTH PLAIN' })).kind).to.equal('transient');
  });

  it("never puts the server's text (which may echo the address) into the reason", () => {
    expect(
      classifySmtpFailure(smtpError({ code: 'EENVELOPE', responseCode: 550, response: '550 rcpt@example.test unknown' })).reason,
    ).not.to.include('example.test');
  });

  it('bounds every SMTP wait below the consumer session (30 s), so a slow server cannot stall a partition into a rebalance', () => {
    for (const [name, ms] of Object.entries(SMTP_TIMEOUTS)) expect(ms, name).to.be.lessThan(30_000);
  });
});
