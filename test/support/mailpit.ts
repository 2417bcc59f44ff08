import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ManagedProcess, freePort, waitUntil } from '../../deploy/local/processes.ts';
import { httpOk, smtpGreeting } from '../../deploy/local/probes.ts';
import { provision } from '../../deploy/local/stack.ts';

/** Reads what the SMTP sink received, through Mailpit's HTTP API. */
export interface SentMail {
  ID: string;
  Subject: string;
  To: { Name: string; Address: string }[];
  Text: string;
  HTML: string;
  MessageID: string;
}

export async function mailTo(mailpitUrl: string, address: string): Promise<SentMail[]> {
  if (!mailpitUrl) throw new Error('MAILPIT_URL is needed to read sent mail');
  const res = await fetch(`${mailpitUrl}/api/v1/search?query=${encodeURIComponent(`to:"${address}"`)}`);
  if (!res.ok) throw new Error(`Mailpit search answered ${res.status}`);
  const list = (await res.json()) as { messages: { ID: string }[] };
  return Promise.all(
    list.messages.map(async (m) => {
      const detail = await fetch(`${mailpitUrl}/api/v1/message/${m.ID}`);
      return (await detail.json()) as SentMail;
    }),
  );
}

const KEY_IN_MAIL = /svc_[A-Za-z0-9]{33}/;

/** The API keys mailed to an address so far, oldest first (one per key e-mail). */
export async function keysMailedTo(mailpitUrl: string, address: string): Promise<string[]> {
  const mails = (await mailTo(mailpitUrl, address)).filter((m) => /API key/.test(m.Subject));
  return mails.reverse().flatMap((m) => KEY_IN_MAIL.exec(m.Text)?.slice(0, 1) ?? []);
}

/** A Mailpit of a test's own (e.g. one that refuses some recipients), stopped by the test. */
export interface OwnMailpit {
  smtpUrl: string;
  apiUrl: string;
  stop(): Promise<void>;
}

export async function startOwnMailpit(dataDir: string, options: { allowedRecipients?: string } = {}): Promise<OwnMailpit> {
  mkdirSync(dataDir, { recursive: true });
  const smtp = await freePort();
  const http = await freePort();
  const args = [
    '--smtp',
    `127.0.0.1:${smtp}`,
    '--listen',
    `127.0.0.1:${http}`,
    '--database',
    join(dataDir, 'mailpit.db'),
    '--smtp-auth-accept-any',
    '--smtp-auth-allow-insecure',
  ];
  if (options.allowedRecipients) args.push('--smtp-allowed-recipients', options.allowedRecipients);
  const proc = new ManagedProcess('mailpit', provision('mailpit'), args, join(dataDir, 'mailpit.log'));
  proc.start();
  await waitUntil(
    'own mailpit',
    async () => {
      await smtpGreeting('127.0.0.1', smtp);
      await httpOk(`http://127.0.0.1:${http}/readyz`);
    },
    30_000,
    proc.diedEarly(),
  );
  return { smtpUrl: `smtp://127.0.0.1:${smtp}`, apiUrl: `http://127.0.0.1:${http}`, stop: () => proc.stop() };
}
