/**
 * What an SMTP failure means for the e-mail that caused it (pure). A permanent rejection (a 5xx
 * reply: no such mailbox, message refused) will fail the same way forever, so the e-mail goes to
 * the dead-letter topic with the reason; a 4xx reply or a connection problem passes, so it is
 * retried with backoff; a failed login is our configuration, not the message, so it is waited out
 * too (readiness reports the stuck mailer) rather than dead-lettering every e-mail.
 */
export type SmtpFailure =
  | { kind: 'permanent'; reason: string }
  | { kind: 'transient'; reason: string }
  | { kind: 'unknown'; reason: string };

interface NodemailerError {
  code?: unknown;
  responseCode?: unknown;
  command?: unknown;
  message?: unknown;
}

const CONNECTION_CODES = new Set([
  'ECONNECTION',
  'ETIMEDOUT',
  'ESOCKET',
  'EDNS',
  'ETLS',
  'EPROTOCOL',
  'EPROXY',
  'ECONNREFUSED',
  'ECONNRESET',
  'EAUTH',
  'ENOAUTH',
  'EABORT',
]);
/** The message or its envelope is refused as such, whatever the server's state. */
const MESSAGE_CODES = new Set(['EENVELOPE', 'EMESSAGE', 'EMAXRECIPIENTS', 'EREQUIRETLS']);

export function classifySmtpFailure(err: unknown): SmtpFailure {
  const e = (typeof err === 'object' && err !== null ? err : {}) as NodemailerError;
  const code = typeof e.code === 'string' ? e.code : undefined;
  const reply = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  // The reply code and the command are safe to record; the server's text may echo the address.
  const reason =
    [code, reply !== undefined ? `reply ${reply}` : undefined, typeof e.command === 'string' ? `to ${e.command}` : undefined]
      .filter(Boolean)
      .join(', ') || 'unknown SMTP failure';
  if (code === 'EAUTH' || code === 'ENOAUTH') return { kind: 'transient', reason };
  if (reply !== undefined && reply >= 500 && reply < 600) return { kind: 'permanent', reason };
  if (reply !== undefined && reply >= 400 && reply < 500) return { kind: 'transient', reason };
  if (code && MESSAGE_CODES.has(code)) return { kind: 'permanent', reason };
  if (code && CONNECTION_CODES.has(code)) return { kind: 'transient', reason };
  return { kind: 'unknown', reason };
}
