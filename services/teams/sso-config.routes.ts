import type { Express } from 'express';
import { z } from 'zod';
import { newEvent } from '../../events/envelope.ts';
import { publishAndApply } from '../../events/own-events.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import { HttpError, conflict } from '../platform/http/errors.ts';
import { noStore } from '../platform/http/no-store.ts';
import { parsedInput } from '../platform/http/parsed-input.ts';
import { requireRole, workspaceAccess, type AccessDeps } from './access.ts';
import type { TeamSsoConfigured, TeamSsoRemoved } from './events.ts';
import { ssoConfigInput, ssoRemoveInput } from './sso-config-input.ts';
import type { SsoDomainClaims } from './sso-domain-claims.ts';
import { ssoDomainStatus, ssoDomainStatuses } from './sso-domain-status.ts';
import { ProviderUnavailable, discoverProvider } from './sso-provider.ts';
import { sealClientSecret } from './sso-secret.ts';
import type { Workspace } from './workspace.ts';
import { findTeam, teamByDomain, workspacesProjection } from './workspaces.projection.ts';

export const SSO_CONFIG_PATH = '/team/sso';

export interface SsoConfigDeps extends AccessDeps {
  publisher: Pick<EventPublisher, 'publishOrdered'>;
  /** KEY_ENCRYPTION_KEY: the client secret is sealed under it before it enters the log. */
  encryptionKey: Buffer;
  /** SSO_ALLOW_HTTP_ISSUERS: a provider on this machine (development, tests). */
  allowHttpIssuers: boolean;
  /** The redirect URI the team registers at its provider: the accounts service's callback. */
  redirectUri: string;
  /** One team per domain, atomically once proven (sso-domain-claims.ts): a change gives back what it drops. */
  claims: Pick<SsoDomainClaims, 'release'>;
  /** How an issuer is checked; the real discovery unless a caller knows better. */
  discover?: typeof discoverProvider;
}

/** A workspace's SSO as its owner and admins read it: never the client secret, not even sealed. */
export const ssoConfigAnswer = z.object({
  subscriptionId: z.string(),
  sso: z
    .object({
      issuer: z.string(),
      clientId: z.string(),
      domains: z.array(z.string()).describe('what the owner configured'),
      provenDomains: z.array(z.string()).describe('those whose proof e-mail was confirmed: only these sign on'),
      domainStatus: z.array(ssoDomainStatus).describe('each configured domain, pending or proven'),
      configuredBy: z.string(),
      configuredAt: z.string().describe('ISO 8601.'),
    })
    .nullable()
    .describe('null: single sign-on is not configured.'),
  redirectUri: z.string().describe('The redirect URI to register for the client at the provider.'),
});
export type SsoConfigAnswer = z.output<typeof ssoConfigAnswer>;

/**
 * A team's OpenID Connect single sign-on, on the keys service beside the other team routes: the
 * owner sets it (PUT) and removes it (DELETE); the owner and admins read it (GET). Each change is one
 * event on teams.events (team.sso-configured, team.sso-removed), which the audit log records; the
 * client secret travels in it sealed (sso-secret.ts) and is never answered.
 */
export function mountSsoConfigRoutes(app: Express, deps: SsoConfigDeps): void {
  const discover = deps.discover ?? discoverProvider;
  const answer = (workspace: Pick<Workspace, 'subscriptionId'>, sso: Workspace['sso']): SsoConfigAnswer => ({
    subscriptionId: workspace.subscriptionId,
    sso: sso
      ? {
          issuer: sso.issuer,
          clientId: sso.clientId,
          domains: sso.domains,
          provenDomains: sso.provenDomains ?? [],
          domainStatus: ssoDomainStatuses(sso),
          configuredBy: sso.configuredBy,
          configuredAt: new Date(sso.configuredAt).toISOString(),
        }
      : null,
    redirectUri: deps.redirectUri,
  });

  app.get(SSO_CONFIG_PATH, noStore, async (req, res) => {
    const { subscriptionId } = parsedInput(ssoRemoveInput, req.query);
    const access = await workspaceAccess(req, deps, subscriptionId);
    requireRole(access, 'owner', 'admin');
    res.json(answer(access.workspace, access.workspace.sso));
  });

  app.put(SSO_CONFIG_PATH, noStore, async (req, res) => {
    const input = parsedInput(ssoConfigInput(deps.allowHttpIssuers), req.body);
    const access = await workspaceAccess(req, deps, input.subscriptionId);
    requireRole(access, 'owner');
    // One team per domain: a domain another team has proven is refused now (naming one that others only
    // named is allowed: naming claims nothing, proving does, see sso-domain-claims.ts).
    for (const domain of input.domains) {
      const other = await teamByDomain(deps.db, domain);
      if (other && other.subscriptionId !== input.subscriptionId)
        throw conflict(`${domain} is already claimed for single sign-on by another team`);
    }
    // The provider must answer as an OpenID Connect issuer now, not at the first member's log-in.
    try {
      await discover({
        issuer: input.issuer,
        clientId: input.clientId,
        clientSecret: input.clientSecret,
        allowLocal: deps.allowHttpIssuers,
      });
    } catch (err) {
      if (err instanceof ProviderUnavailable) throw new HttpError(422, 'ISSUER_NOT_DISCOVERED', err.message);
      throw err;
    }
    const event: TeamSsoConfigured = newEvent(
      'team.sso-configured',
      {
        subscriptionId: input.subscriptionId,
        issuer: input.issuer,
        clientId: input.clientId,
        encryptedClientSecret: sealClientSecret(input.clientSecret, deps.encryptionKey, input.subscriptionId),
        domains: input.domains,
        configuredBy: access.account.userId,
      },
      { correlationId: req.id },
    );
    await publishAndApply(deps.publisher, deps.db, workspacesProjection, [event]);
    // The proven domains this configuration no longer names lose their proof and are free for others (a
    // failure here leaves a claim that turns stale in a minute).
    await deps.claims.release(input.subscriptionId, input.domains);
    const team = await findTeam(deps.db, input.subscriptionId);
    res.json(answer(access.workspace, team?.sso ?? null));
  });

  app.delete(SSO_CONFIG_PATH, noStore, async (req, res) => {
    const { subscriptionId } = parsedInput(ssoRemoveInput, req.query);
    const access = await workspaceAccess(req, deps, subscriptionId);
    requireRole(access, 'owner');
    // Removing what is not there changes nothing and records nothing.
    if (access.workspace.sso) {
      const event: TeamSsoRemoved = newEvent(
        'team.sso-removed',
        { subscriptionId, removedBy: access.account.userId },
        { correlationId: req.id },
      );
      await publishAndApply(deps.publisher, deps.db, workspacesProjection, [event]);
    }
    await deps.claims.release(subscriptionId);
    res.json(answer(access.workspace, null));
  });
}
