import { randomUUID } from 'node:crypto';
import type { Express } from 'express';
import { z } from 'zod';
import { newEvent } from '../../events/envelope.ts';
import { publishAndApply } from '../../events/own-events.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import { authenticate } from '../accounts/session.ts';
import type { RotationLimit } from '../keys/rotation-limit.ts';
import { HttpError, badRequest, conflict } from '../platform/http/errors.ts';
import { noStore } from '../platform/http/no-store.ts';
import { parsedInput } from '../platform/http/parsed-input.ts';
import { requireRole, workspaceAccess, type AccessDeps } from './access.ts';
import type { TeamSsoDomainProofRequested, TeamSsoDomainVerified } from './events.ts';
import { unclaimableDomainReason } from './public-mail-domains.ts';
import { domainProofConfirmInput, domainProofInput, isAddressAt } from './sso-config-input.ts';
import type { SsoDomainClaims } from './sso-domain-claims.ts';
import {
  DOMAIN_PROOF_TTL_MS,
  confirmable,
  domainProofTokenHash,
  newDomainProofToken,
  sealDomainProofToken,
} from './sso-domain-proof-token.ts';
import { findTeam, teamByDomain, teamByDomainProofToken, workspacesProjection } from './workspaces.projection.ts';

export const DOMAIN_PROOFS_PATH = '/team/sso/domain-proofs';
export const DOMAIN_PROOF_CONFIRM_PATH = '/team/sso/domain-proofs/confirm';
/** Proof e-mails per workspace per hour: each one mails an address the owner names. */
export const DOMAIN_PROOFS_PER_HOUR = 10;

export interface DomainProofDeps extends AccessDeps {
  publisher: Pick<EventPublisher, 'publishOrdered'>;
  encryptionKey: Buffer;
  claims: Pick<SsoDomainClaims, 'claim' | 'spend'>;
  /** Proof e-mails per workspace per hour, for every process (the hourly slots invitations use). */
  proofMails: Pick<RotationLimit, 'take'>;
}

export const domainProofAnswer = z.object({
  subscriptionId: z.string(),
  domain: z.string(),
  address: z.string().describe('where the one-time link went'),
  expiresAt: z.string().describe('ISO 8601: the link works until then, once'),
});
export const domainProvenAnswer = z.object({
  subscriptionId: z.string(),
  domain: z.string(),
  status: z.literal('proven'),
});

/** One answer for a token that is not there and one the caller may not see: a refusal tells nothing about other teams. */
const noSuchProof = () => new HttpError(404, 'NOT_FOUND', 'no domain proof of yours has that token');

/**
 * Proving a team controls a single sign-on domain, by an e-mail round trip: the owner names an address
 * at the domain (by default their own, when it is there), svc mails it a one-time link that works for
 * 24 hours, and the owner confirms it signed in (the console's /team/sso/verify page, or the API). So a
 * domain is proven only when someone who reads mail at the domain passed the link to the team's owner.
 * Confirming claims the domain for the team atomically (one team per domain) and records
 * team.sso-domain-verified, which the workspaces projection applies: from then on, and only then, the
 * domain's addresses sign on through the team's provider.
 */
export function mountSsoDomainProofRoutes(app: Express, deps: DomainProofDeps): void {
  app.post(DOMAIN_PROOFS_PATH, noStore, async (req, res) => {
    const input = parsedInput(domainProofInput, req.body);
    const access = await workspaceAccess(req, deps, input.subscriptionId);
    requireRole(access, 'owner');
    const sso = access.workspace.sso;
    if (!sso?.domains.includes(input.domain))
      throw new HttpError(
        422,
        'DOMAIN_NOT_CONFIGURED',
        `${input.domain} is not one of this team's single sign-on domains (PUT /team/sso first)`,
      );
    // A configuration from before public domains were refused may still name one: it is never proven.
    const unclaimable = unclaimableDomainReason(input.domain);
    if (unclaimable) throw badRequest(`${unclaimable}; it cannot be claimed for single sign-on`);
    if ((sso.provenDomains ?? []).includes(input.domain)) throw conflict(`${input.domain} is already proven for this team`);
    const other = await teamByDomain(deps.db, input.domain);
    if (other && other.subscriptionId !== input.subscriptionId)
      throw conflict(`${input.domain} is already claimed for single sign-on by another team`);
    const address = input.address ?? (isAddressAt(access.account.email, input.domain) ? access.account.email : null);
    if (address === null) throw badRequest(`address: name an address at ${input.domain} to send the proof to`);
    if (!isAddressAt(address, input.domain)) throw badRequest(`address: the proof goes to an address at ${input.domain}, not ${address}`);
    const slot = await deps.proofMails.take(`sso-domain-proof:${input.subscriptionId}`);
    if (!slot.allowed)
      throw new HttpError(429, 'RATE_LIMITED', `at most ${DOMAIN_PROOFS_PER_HOUR} proof e-mails per workspace per hour`, {
        headers: { 'Retry-After': String(Math.ceil(slot.retryAfterMs / 1000)) },
      });
    const token = newDomainProofToken();
    const expiresAt = new Date(Date.now() + DOMAIN_PROOF_TTL_MS);
    const event: TeamSsoDomainProofRequested = newEvent(
      'team.sso-domain-proof-requested',
      {
        subscriptionId: input.subscriptionId,
        proofId: randomUUID(),
        domain: input.domain,
        address,
        tokenHash: domainProofTokenHash(token),
        encryptedToken: sealDomainProofToken(token, deps.encryptionKey, { subscriptionId: input.subscriptionId, domain: input.domain }),
        expiresAt,
        requestedBy: access.account.userId,
        requestedByEmail: access.account.email,
      },
      { correlationId: req.id },
    );
    await publishAndApply(deps.publisher, deps.db, workspacesProjection, [event]);
    res.status(202).json({ subscriptionId: input.subscriptionId, domain: input.domain, address, expiresAt: expiresAt.toISOString() });
  });

  app.post(DOMAIN_PROOF_CONFIRM_PATH, noStore, async (req, res) => {
    const { token } = parsedInput(domainProofConfirmInput, req.body);
    // Signed in first: whoever is not gets 401 whether or not the token exists.
    await authenticate(req, deps.tokens, deps.accounts);
    const tokenHash = domainProofTokenHash(token);
    const team = await teamByDomainProofToken(deps.db, tokenHash);
    const proof = team?.sso?.proofs?.find((p) => p.tokenHash === tokenHash);
    if (!team || !proof) throw noSuchProof();
    // The token names its team; only that team's owner confirms it. Anyone outside the team hears what a
    // made-up token gets; an admin or member is told only the owner may.
    const access = await workspaceAccess(req, deps, team.subscriptionId).catch((err: unknown) => {
      throw err instanceof HttpError && err.status === 404 ? noSuchProof() : err;
    });
    requireRole(access, 'owner');
    const state = confirmable(proof);
    if (state === 'used') throw new HttpError(410, 'USED', 'this proof link was already used or replaced by a newer one');
    if (state === 'expired') throw new HttpError(410, 'EXPIRED', 'this proof link has expired; ask for a new one');
    const other = await teamByDomain(deps.db, proof.domain);
    if (other && other.subscriptionId !== team.subscriptionId)
      throw conflict(`${proof.domain} is already claimed for single sign-on by another team`);
    // Once, across every process: a second confirm of the same link, even at the same moment, is refused.
    if (!(await deps.claims.spend(team.subscriptionId, proof.proofId)))
      throw new HttpError(410, 'USED', 'this proof link was already used or replaced by a newer one');
    // The domain becomes this team's now, atomically: two teams proving one domain together get one 200.
    const { taken } = await deps.claims.claim(team.subscriptionId, [proof.domain]);
    if (taken !== null) throw conflict(`${taken} is already claimed for single sign-on by another team`);
    const event: TeamSsoDomainVerified = newEvent(
      'team.sso-domain-verified',
      { subscriptionId: team.subscriptionId, proofId: proof.proofId, domain: proof.domain, verifiedBy: access.account.userId },
      { correlationId: req.id },
    );
    await publishAndApply(deps.publisher, deps.db, workspacesProjection, [event]);
    // The projection is the judge (the configuration may have changed meanwhile): answer what it says.
    const after = await findTeam(deps.db, team.subscriptionId);
    if (!(after?.sso?.provenDomains ?? []).includes(proof.domain))
      throw new HttpError(409, 'NOT_PROVEN', `${proof.domain} is no longer one of this team's single sign-on domains`);
    res.json({ subscriptionId: team.subscriptionId, domain: proof.domain, status: 'proven' });
  });
}
