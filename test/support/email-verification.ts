import { eventually } from './env.ts';
import { mailTo } from './mailpit.ts';

const LINK = /\/verify\?token=([A-Za-z0-9_-]{43})/;

/** The verification links mailed to an address so far, newest first (the welcome's and each resend's). */
export async function verificationLinksTo(mailpitUrl: string, address: string): Promise<string[]> {
  const mails = await mailTo(mailpitUrl, address);
  return mails.flatMap((m) => LINK.exec(m.Text)?.slice(1, 2) ?? []);
}

/** Waits for the `count`-th verification link to an address and answers the newest one's token. */
export async function verificationToken(mailpitUrl: string, address: string, count = 1): Promise<string> {
  const links = await eventually(`verification link #${count} to ${address}`, async () => {
    const found = await verificationLinksTo(mailpitUrl, address);
    return found.length >= count ? found : undefined;
  });
  return links[0]!;
}

/**
 * Verifies an account's address as its owner does: the link from the welcome e-mail (read from
 * Mailpit) confirmed with the account's session. For tests whose set-up links a subscription to an
 * account by e-mail, which needs a verified address.
 */
export async function verifyEmail(stack: { MAILPIT_URL: string }, accountsUrl: string, email: string, sessionToken: string): Promise<void> {
  const token = await verificationToken(stack.MAILPIT_URL, email);
  const res = await fetch(`${accountsUrl}/auth/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${sessionToken}` },
    body: JSON.stringify({ token }),
  });
  if (res.status !== 200) throw new Error(`POST /auth/verify answered ${res.status} for ${email}`);
}
