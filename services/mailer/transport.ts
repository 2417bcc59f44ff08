import nodemailer, { type Transporter } from 'nodemailer';

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

export function smtpMailer(smtpUrl: string, from: string): Mailer {
  const transporter: Transporter = nodemailer.createTransport(smtpUrl);
  return {
    async send(mail) {
      await transporter.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html, messageId: mail.messageId });
    },
    async verify() {
      await transporter.verify();
    },
    close: () => transporter.close(),
  };
}
