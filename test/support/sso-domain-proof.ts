import { randomUUID } from 'node:crypto';
import { eventually } from './env.ts';
import { postJson } from './http.ts';
import { mailTo } from './mailpit.ts';

/** The verification link in a domain-proof e-mail (its token is 43 URL-safe characters). */
const PROOF_LINK = /\/team\/sso\/verify\?token=([A-Za-z0-9_-]{43})/;

export interface DomainProofRequest {
  /** The keys service's base URL (where the team routes live). */
  keysUrl: string;
  mailpitUrl: string;
  /** The team owner's account token. */
  ownerToken: string;
  subscriptionId: string;
  domain: string;
  /** The address at the domain the proof is mailed to; a fresh one at the domain when absent. */
  address?: string;
}

/** Asks for a domain's proof e-mail (POST /team/sso/domain-proofs) and answers the address it went to. */
export async function requestDomainProof(request: DomainProofRequest): Promise<{ status: number; text: string; address: string }> {
  const address = request.address ?? `it-${randomUUID().slice(0, 8)}@${request.domain}`;
  const res = await postJson(
    `${request.keysUrl}/team/sso/domain-proofs`,
    { subscriptionId: request.subscriptionId, domain: request.domain, address },
    { authorization: `Bearer ${request.ownerToken}` },
  );
  return { status: res.status, text: res.text, address };
}

/** The newest domain-proof token mailed to an address, read from Mailpit as its reader would (waits for it). */
export async function domainProofTokenMailedTo(mailpitUrl: string, address: string, after: readonly string[] = []): Promise<string> {
  return eventually(`a domain-proof e-mail to ${address}`, async () => {
    const tokens = (await mailTo(mailpitUrl, address)).flatMap((m) => PROOF_LINK.exec(m.Text)?.slice(1, 2) ?? []);
    return tokens.find((t) => !after.includes(t));
  });
}

/** Confirms a domain proof with its token (POST /team/sso/domain-proofs/confirm), as the caller whose token is given. */
export async function confirmDomainProof(keysUrl: string, callerToken: string, token: string) {
  return postJson(`${keysUrl}/team/sso/domain-proofs/confirm`, { token }, { authorization: `Bearer ${callerToken}` });
}

/**
 * Proves a team's single sign-on domain through the real flow: the owner asks for the proof e-mail to an
 * address at the domain, the link is read from Mailpit, and the owner confirms it. The domain must be in
 * the team's SSO configuration already (PUT /team/sso). Throws unless every step answers as it should.
 */
export async function proveSsoDomain(request: DomainProofRequest): Promise<{ address: string }> {
  const asked = await requestDomainProof(request);
  if (asked.status !== 202) throw new Error(`POST /team/sso/domain-proofs answered ${asked.status}: ${asked.text}`);
  const token = await domainProofTokenMailedTo(request.mailpitUrl, asked.address);
  const confirmed = await confirmDomainProof(request.keysUrl, request.ownerToken, token);
  if (confirmed.status !== 200) throw new Error(`POST /team/sso/domain-proofs/confirm answered ${confirmed.status}: ${confirmed.text}`);
  return { address: asked.address };
}
