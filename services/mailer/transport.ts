import nodemailer, { type Transporter } from 'nodemailer';
import { withClientSpan } from '../platform/tracing/client-span.ts';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Deterministic, so a receiving system can drop a duplicate if a lease takeover ever re-sends. */
  messageId: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
  verify(): Promise<void>;
  close(): void;
}

/**
 * Every SMTP wait is bounded well below the consumer's 30 s session (nodemailer's defaults run to
 * minutes): a slow server makes the send fail and retry, instead of holding the partition until the
 * group rebalances around it.
 */
export const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 5_000, socketTimeout: 15_000, dnsTimeout: 5_000 } as const;

export function smtpMailer(smtpUrl: string, from: string): Mailer {
  // Pooled: the SMTP connection (TCP, greeting, EHLO, TLS, login) is set up once and reused, not
  // per e-mail; an idle one is closed by socketTimeout and made again on the next send.
  const transporter: Transporter = nodemailer.createTransport({
    url: smtpUrl,
    pool: true,
    maxConnections: 2,
    ...SMTP_TIMEOUTS,
  } as Parameters<typeof nodemailer.createTransport>[0]);
  const spanAttributes = smtpSpanAttributes(smtpUrl);
  return {
    async send(mail) {
      await withClientSpan('smtp send', spanAttributes, () =>
        transporter.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html, messageId: mail.messageId }),
      );
    },
    async verify() {
      await transporter.verify();
    },
    close: () => transporter.close(),
  };
}

/** The server a send goes to: host and port only (the URL's user and password stay out of spans), and no recipient, subject or body. */
function smtpSpanAttributes(smtpUrl: string): Record<string, string | number> {
  const url = new URL(smtpUrl);
  const port = url.port === '' ? (url.protocol === 'smtps:' ? 465 : 587) : Number(url.port);
  return { 'server.address': url.hostname, 'server.port': port, 'network.protocol.name': 'smtp' };
}
