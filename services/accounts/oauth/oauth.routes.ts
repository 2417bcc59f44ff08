import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Db } from 'mongodb';
import type Provider from 'oidc-provider';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { isTier, limitsOf } from '../../kernel/tiers.ts';
import type { z } from 'zod';
import { clientIp } from '../../platform/http/client-ip.ts';
import { HttpError, badRequest } from '../../platform/http/errors.ts';
import { keysEqualConstantTime } from '../../platform/secrets.ts';
import { authenticate, type SessionStore } from '../session.ts';
import type { AttemptLimiter } from '../shared-limits.ts';
import type { TokenSettings } from '../tokens.ts';
import { MCP_SCOPE, OAUTH_ROUTES } from './authorization-server.ts';
import { type Connection, type Connections, sealGrantKey } from './connections.ts';
import { markClientUsed, oauthCollection } from './mongo-adapter.ts';
import {
  consentInput,
  grantIdParam,
  interactionUid,
  verifyInput,
  type ConnectionsAnswer,
  type InteractionAnswer,
  type RedirectAnswer,
  type VerifyAnswer,
} from './oauth-input.ts';
import { RESOURCE_PROOF_HEADER, resourceProof } from './resource-proof.ts';

export interface OauthRouteDeps {
  provider: Provider;
  db: Db;
  connections: Connections;
  tokens: TokenSettings;
  store: SessionStore;
  keyEncryptionKey: Buffer;
  mcpResource: string;
  /** The keys service (AUTH_URL): the key chosen at consent is checked there, as the console checks one. */
  keysUrl: string;
  /** Dynamic registrations per client address per hour. */
  registrations: AttemptLimiter;
  /** A grant was made or ended: the events the audit log shows. */
  onConnected(connection: Connection, correlationId: string): Promise<void>;
  onDisconnected(connection: Connection, by: 'customer' | 'provider', correlationId: string): Promise<void>;
}

/** Paths the provider answers itself (Koa, mounted in front of Express's routes). */
const PROVIDER_PATHS =
  /^\/(oauth\/(authorize|token|register|revoke|jwks|end-session|par)(\/|$)|\.well-known\/(oauth-authorization-server|openid-configuration)$)/;

/** The token endpoint's form, read here (the provider takes the parsed body): small, as the provider's own limit. */
const tokenForm = express.urlencoded({ extended: false, limit: '56kb', parameterLimit: 50 });

const parse = <T>(schema: z.ZodType<T>, value: unknown): T => {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw badRequest(parsed.error.issues[0]?.message ?? 'invalid request');
  return parsed.data;
};

/** Whether a tier's features include what the MCP server's gate asks for (visionRAG). */
const tierAllowsMcp = (tier: string): boolean => isTier(tier) && limitsOf(tier).features.visionRAG;

const notFound = () =>
  new HttpError(404, 'NOT_FOUND', 'this authorization request has ended or does not exist; start again from the assistant');

/** The provider in front of the accounts service's routes, and the routes the console and the MCP server call. */
export function mountOauthRoutes(app: Express, deps: OauthRouteDeps): void {
  const { provider, connections } = deps;
  const serveProvider = provider.callback();

  app.use(async (req: Request, res: Response, next: NextFunction) => {
    if (!PROVIDER_PATHS.test(req.path)) return next();
    // Registration is open to anyone (RFC 7591): per client address per hour, shared by every replica.
    if (req.method === 'POST' && req.path === '/oauth/register') {
      try {
        await deps.registrations.consume(clientIp(req));
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) return next(err);
        res
          .set('Retry-After', String(Math.max(1, Math.ceil(err.msBeforeNext / 1000))))
          .status(429)
          .json({ error: 'too_many_requests', error_description: 'too many registrations from this address; retry later' });
        return;
      }
    }
    if (req.method === 'POST' && req.path === OAUTH_ROUTES.token) {
      // RFC 8707 lets a token request leave `resource` out (the grant's is used); here it is required,
      // so a client always says which server the token is for, and only this one is served.
      const body = await new Promise<unknown>((resolve, reject) =>
        tokenForm(req, res, (err?: unknown) => (err ? reject(err) : resolve(req.body))),
      );
      const grantType = (body as { grant_type?: unknown } | undefined)?.grant_type;
      const resource = (body as { resource?: unknown } | undefined)?.resource;
      if ((grantType === 'authorization_code' || grantType === 'refresh_token') && (resource === undefined || resource === '')) {
        res
          .set('Cache-Control', 'no-store')
          .status(400)
          .json({ error: 'invalid_target', error_description: `the resource parameter is required: ${deps.mcpResource}` });
        return;
      }
    }
    serveProvider(req, res);
  });

  const account = async (req: Request) => (await authenticate(req, deps.tokens, deps.store)).account;

  const pending = async (uid: string) => {
    const interaction = await provider.Interaction.find(uid);
    if (!interaction) throw notFound();
    const clientId = String(interaction.params.client_id ?? '');
    // A client known by its metadata document is fetched again where this replica has not cached it; a
    // document gone or changed for the worse since the authorization request ends the request here.
    const client = await provider.Client.find(clientId).catch((err: unknown) => {
      if (String((err as { error?: unknown }).error ?? '').startsWith('invalid_client')) return undefined;
      throw err;
    });
    if (!client) throw notFound();
    return { interaction, client };
  };

  app.get('/oauth/interactions/:uid', async (req, res) => {
    await account(req);
    const { uid } = parse(interactionUid, req.params);
    const { interaction, client } = await pending(uid);
    const redirectUri = String(interaction.params.redirect_uri ?? '');
    const answer: InteractionAnswer = {
      uid,
      client: {
        id: client.clientId,
        name: client.clientName ?? client.clientId,
        uri: client.clientUri ?? null,
        redirectHost: URL.parse(redirectUri)?.host ?? '',
      },
      scopes: String(interaction.params.scope ?? MCP_SCOPE)
        .split(' ')
        .filter(Boolean),
      resource: deps.mcpResource,
    };
    res.set('Cache-Control', 'no-store').json(answer);
  });

  app.post('/oauth/interactions/:uid/consent', async (req, res) => {
    const me = await account(req);
    const { uid } = parse(interactionUid, req.params);
    const { apiKey } = parse(consentInput, req.body);
    const { interaction, client } = await pending(uid);
    // The subscription chosen: a key that works now, checked where every key is (GET /usage).
    const usage = await fetch(`${deps.keysUrl}/usage`, {
      headers: { authorization: `Bearer ${apiKey}`, 'x-forwarded-for': clientIp(req) },
      signal: AbortSignal.timeout(10_000),
    });
    if (usage.status >= 500) throw new HttpError(503, 'UNAVAILABLE', 'the keys service is unavailable; retry shortly');
    if (!usage.ok) throw new HttpError(400, 'BAD_KEY', 'that key does not work (replaced, revoked, expired, or mistyped)');
    const facts = (await usage.json()) as { tier: string; key?: { last4: string | null } };
    // The `mcp` scope is what the tier allows: the MCP server sits behind the visionRAG feature, so a key
    // whose tier lacks it would be refused on every call. Said here, before any grant exists.
    if (!tierAllowsMcp(facts.tier))
      throw new HttpError(
        400,
        'TIER_WITHOUT_MCP',
        `that key's subscription (${String(facts.tier).slice(0, 20)}) does not include the MCP server; choose a pro or team key`,
      );
    const grant = new provider.Grant({ accountId: me.userId, clientId: client.clientId });
    grant.addResourceScope(deps.mcpResource, MCP_SCOPE);
    // The provider knows `mcp` as one of its own scopes too (clients ask for it without a resource at registration).
    const requested = String(interaction.params.scope ?? '').split(' ');
    grant.addOIDCScope([MCP_SCOPE, ...(requested.includes('offline_access') ? ['offline_access'] : [])].join(' '));
    const grantId = await grant.save();
    const connection: Connection = {
      _id: grantId,
      accountId: me.userId,
      clientId: client.clientId,
      clientName: (client.clientName ?? client.clientId).slice(0, 200),
      scopes: [MCP_SCOPE],
      resource: deps.mcpResource,
      tier: facts.tier,
      keyLast4: facts.key?.last4 ?? apiKey.slice(-4),
      sealedKey: sealGrantKey(apiKey, deps.keyEncryptionKey, grantId, me.userId),
      connectedAt: new Date(),
      lastUsedAt: null,
      revokedAt: null,
    };
    await connections.record(connection);
    await markClientUsed(deps.db, client.clientId);
    interaction.result = { login: { accountId: me.userId }, consent: { grantId } };
    await interaction.save(Math.max(1, interaction.exp - Math.floor(Date.now() / 1000)));
    await deps.onConnected(connection, req.id);
    const answer: RedirectAnswer = { redirectTo: interaction.returnTo };
    res.set('Cache-Control', 'no-store').json(answer);
  });

  app.post('/oauth/interactions/:uid/deny', async (req, res) => {
    await account(req);
    const { uid } = parse(interactionUid, req.params);
    const { interaction } = await pending(uid);
    interaction.result = { error: 'access_denied', error_description: 'the person declined' };
    await interaction.save(Math.max(1, interaction.exp - Math.floor(Date.now() / 1000)));
    const answer: RedirectAnswer = { redirectTo: interaction.returnTo };
    res.set('Cache-Control', 'no-store').json(answer);
  });

  app.get('/oauth/connections', async (req, res) => {
    const me = await account(req);
    const answer: ConnectionsAnswer = {
      connections: (await connections.ofAccount(me.userId)).map((c) => ({
        grantId: c._id,
        clientId: c.clientId,
        clientName: c.clientName,
        scopes: c.scopes,
        tier: c.tier,
        keyLast4: c.keyLast4,
        connectedAt: c.connectedAt.toISOString(),
        lastUsedAt: c.lastUsedAt?.toISOString() ?? null,
      })),
    };
    res.set('Cache-Control', 'no-store').json(answer);
  });

  app.delete('/oauth/connections/:grantId', async (req, res) => {
    const me = await account(req);
    const { grantId } = parse(grantIdParam, req.params);
    // Another account's grant is answered as one that does not exist.
    const ended = await connections.revoke(grantId, me.userId);
    if (!ended) throw new HttpError(404, 'NOT_FOUND', 'no such connected assistant');
    await revokeGrant(deps, grantId);
    await deps.onDisconnected(ended, 'customer', req.id);
    res.status(204).end();
  });

  // A refresh token used twice (the provider revokes its grant) or revoked by the client (RFC 7009).
  provider.on('grant.revoked', (_ctx: unknown, grantId: string) => {
    void connections
      .revoke(grantId)
      .then((ended) => ended && deps.onDisconnected(ended, 'provider', grantId))
      .catch(() => undefined);
  });

  app.post('/oauth/resource/verify', async (req, res) => {
    const proof = req.get(RESOURCE_PROOF_HEADER) ?? '';
    if (!keysEqualConstantTime(proof, resourceProof(deps.keyEncryptionKey)))
      throw new HttpError(403, 'FORBIDDEN', 'only the MCP server asks about tokens here');
    const { token } = parse(verifyInput, req.body);
    const inactive: VerifyAnswer = { active: false };
    const found = await provider.AccessToken.find(token);
    if (!found || found.isExpired) return void res.json(inactive);
    const [grant, connection] = await Promise.all([provider.Grant.find(found.grantId), connections.find(found.grantId)]);
    if (!grant || !connection || connection.revokedAt !== null || connection.accountId !== found.accountId) return void res.json(inactive);
    const audience = Array.isArray(found.aud) ? found.aud : found.aud ? [found.aud] : [];
    await connections.touch(connection);
    const answer: VerifyAnswer = {
      active: true,
      accountId: found.accountId,
      clientId: found.clientId,
      grantId: found.grantId,
      resource: audience[0] ?? '',
      scopes: (found.scope ?? '').split(' ').filter(Boolean),
      expiresAt: found.exp,
      sealedKey: connection.sealedKey,
    };
    res.set('Cache-Control', 'no-store').json(answer);
  });
}

/** Ends a grant at once: the grant and every token and code minted under it. */
export async function revokeGrant(deps: Pick<OauthRouteDeps, 'provider' | 'db'>, grantId: string): Promise<void> {
  const grant = await deps.provider.Grant.find(grantId);
  await grant?.destroy();
  await Promise.all(['AccessToken', 'RefreshToken', 'AuthorizationCode'].map((m) => oauthCollection(deps.db, m).deleteMany({ grantId })));
}
