import type { Request } from 'express';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { OutboxRelay } from '../../events/outbox.ts';
import { checkoutGap, mountCheckoutRoute } from '../billing/checkout.routes.ts';
import { mountPricingPage } from '../billing/pricing/pricing.routes.ts';
import { lemonSqueezyProvider } from '../billing/provider-api.ts';
import { Parts } from '../platform/parts.ts';
import { every, HOUR_MS } from '../platform/periodic.ts';
import type { ServiceModule } from '../platform/service.ts';
import { serveHttp, startProjection } from '../platform/wiring.ts';
import { AccountStore } from './account-store.ts';
import { accountsApi } from './accounts.api.ts';
import { LoginLimiter } from './login-limiter.ts';
import { LoginRecords } from './login-records.ts';
import { mountLogoutRoutes } from './logout.routes.ts';
import { mountEmailVerificationRoutes, RESENDS_PER_ACCOUNT_PER_HOUR, RESENDS_PER_IP_PER_HOUR } from './email-verification.routes.ts';
import { Passwords } from './password.ts';
import { mountAccountRoutes } from './accounts.routes.ts';
import { SharedLimits } from './shared-limits.ts';
import { SignupLimiter } from './signup-limiter.ts';
import { authenticate } from './session.ts';
import { usersProjection } from './users.projection.ts';
import { OneTimeCodes } from './sso/one-time-codes.ts';
import { mountSsoRoutes } from './sso/sso.routes.ts';
import { ProviderIdentities } from './sso/provider-identities.ts';
import { newEvent } from '../../events/envelope.ts';
import { createAuthorizationServer } from './oauth/authorization-server.ts';
import { Connections } from './oauth/connections.ts';
import { ensureOauthIndexes, sweepOauth } from './oauth/mongo-adapter.ts';
import { mountOauthRoutes } from './oauth/oauth.routes.ts';
import { publicFetch } from '../platform/public-fetch.ts';
import { clientIp } from '../platform/http/client-ip.ts';
import type { AccountAssistantConnected, AccountAssistantDisconnected } from './events.ts';

/** Dynamic client registrations (RFC 7591) one client address may make per hour. */
const OAUTH_REGISTRATIONS_PER_IP_PER_HOUR = 20;
/** Client ID metadata documents fetched (not served from the cache) per client address per hour. */
const OAUTH_METADATA_FETCHES_PER_IP_PER_HOUR = 30;

/** The account service: HTTP face on ACCOUNTS_PORT, the users projection, the sign-up outbox relay. */
export const accountsService: ServiceModule = {
  name: 'accounts',
  description: 'sign-up, login, log-out and current user (POST /auth/signup, POST /auth/login, POST /auth/logout, GET /auth/me)',
  async start(rt) {
    const { config, mongo } = rt;
    const log = rt.log.child({ service: 'accounts' });
    const parts = new Parts();
    return parts.starting(async () => {
      const store = new AccountStore(mongo.db, rt.codec, rt.publisher, log);
      await store.ensureIndexes();
      await store.revocations.ensureIndexes();
      // Attempt limits every replica shares, kept across restarts (swept: FerretDB has no TTL index).
      const limits = new SharedLimits(mongo.db);
      await limits.ensureIndexes();
      parts.add(every(60_000, async () => void (await limits.sweep()), log, 'the attempt limits sweep'));
      parts.add(await startProjection(rt, log, usersProjection));
      const logins = new LoginRecords(mongo.db, rt.codec, rt.publisher, log);
      await logins.ensureIndexes();
      const relay = parts.add(
        new OutboxRelay([store.relayable, logins.relayable, store.revocations.relayable], { intervalMs: 5000, graceMs: 30_000, log }),
      );
      relay.start();
      parts.add(every(HOUR_MS, () => logins.sweep(), log, 'the login records sweep'));
      parts.add(every(HOUR_MS, async () => void (await store.revocations.sweep()), log, 'the revoked tokens sweep'));
      const passwords = new Passwords(config.bcryptCost, config.passwordHashing);
      parts.onStop(() => passwords.close());
      // Sign-on starts per client address per minute, on the log-in attempts' budget (LOGIN_ATTEMPTS_PER_IP_PER_MINUTE).
      const ssoStarts = limits.limiter('sso-start', config.loginLimits.perIpPerMinute, 60);
      const codes = new OneTimeCodes(mongo.db);
      await codes.ensureIndexes();
      parts.add(every(HOUR_MS, () => codes.sweep(), log, 'the single sign-on codes sweep'));
      // The provider identities single sign-on matches, with their own relay for account.sso-linked.
      const identities = new ProviderIdentities(mongo.db, rt.codec, rt.publisher, log);
      await identities.ensureIndexes();
      parts.add(new OutboxRelay([identities.relayable], { intervalMs: 5000, graceMs: 30_000, log })).start();
      // The OAuth authorization server for assistants that connect to the MCP server (oauth/).
      await ensureOauthIndexes(mongo.db);
      parts.add(every(HOUR_MS, async () => void (await sweepOauth(mongo.db)), log, 'the OAuth records sweep'));
      const connections = new Connections(mongo.db);
      await connections.ensureIndexes();
      // A client_id that is a URL makes this service fetch it: per client address per hour, like registrations.
      const metadataFetches = limits.limiter('oauth-client-metadata', OAUTH_METADATA_FETCHES_PER_IP_PER_HOUR, 3600);
      const authorizationServer = createAuthorizationServer({
        issuer: config.sso.publicAccountsUrl,
        mcpResource: config.publicMcpUrl,
        consoleUrl: config.publicConsoleUrl,
        db: mongo.db,
        secret: config.secrets.jwtSecret,
        clientMetadataFetch: publicFetch(config.oauthClientMetadataAllowLocal),
        mayFetchClientMetadata: async (req) => {
          if (!req) return true;
          try {
            await metadataFetches.consume(clientIp(req as Request));
            return true;
          } catch (err) {
            if (err instanceof RateLimiterRes) return false;
            throw err;
          }
        },
      });
      const server = await serveHttp(rt, log, {
        service: 'accounts',
        port: config.ports.accounts,
        api: accountsApi,
        mount: (a) => {
          mountAccountRoutes(a, {
            config,
            db: mongo.db,
            store,
            passwords,
            limiter: new LoginLimiter(limits, {
              perIpPerMinute: config.loginLimits.perIpPerMinute,
              failuresPerEmailPer15Min: config.loginLimits.failuresPerEmail,
            }),
            signups: new SignupLimiter(limits, config.signupLimits),
            logins,
          });
          mountLogoutRoutes(a, { tokens: { secret: config.secrets.jwtSecret, ...config.jwt }, store });
          mountOauthRoutes(a, {
            provider: authorizationServer,
            db: mongo.db,
            connections,
            tokens: { secret: config.secrets.jwtSecret, ...config.jwt },
            store,
            keyEncryptionKey: config.secrets.keyEncryptionKey,
            mcpResource: config.publicMcpUrl,
            keysUrl: config.authUrl,
            registrations: limits.limiter('oauth-register', OAUTH_REGISTRATIONS_PER_IP_PER_HOUR, 3600),
            onConnected: async (c, correlationId) => {
              const event: AccountAssistantConnected = newEvent(
                'account.assistant-connected',
                {
                  userId: c.accountId,
                  grantId: c._id,
                  clientId: c.clientId,
                  clientName: c.clientName,
                  scopes: c.scopes,
                  tier: c.tier,
                  keyLast4: c.keyLast4,
                },
                { correlationId },
              );
              await rt.publisher.publish(event);
            },
            onDisconnected: async (c, by, correlationId) => {
              const event: AccountAssistantDisconnected = newEvent(
                'account.assistant-disconnected',
                { userId: c.accountId, grantId: c._id, clientId: c.clientId, clientName: c.clientName, by },
                { correlationId },
              );
              await rt.publisher.publish(event);
            },
          });
          mountEmailVerificationRoutes(a, {
            db: mongo.db,
            tokens: { secret: config.secrets.jwtSecret, ...config.jwt },
            store,
            keyEncryptionKey: config.secrets.keyEncryptionKey,
            resendsPerAccount: limits.limiter('verify-resend-account', RESENDS_PER_ACCOUNT_PER_HOUR, 3600),
            resendsPerIp: limits.limiter('verify-resend-ip', RESENDS_PER_IP_PER_HOUR, 3600),
          });
          // A team member's single sign-on through the team's OpenID Connect provider.
          mountSsoRoutes(a, {
            db: mongo.db,
            store,
            identities,
            passwords,
            publisher: rt.publisher,
            logins,
            codes,
            tokens: { secret: config.secrets.jwtSecret, ...config.jwt },
            encryptionKey: config.secrets.keyEncryptionKey,
            callbackUrl: config.sso.callbackUrl,
            consoleUrl: config.publicConsoleUrl,
            allowLocalProviders: config.sso.allowHttpIssuers,
            admitStart: (ipKey) =>
              ssoStarts.consume(ipKey).then(
                () => true,
                (err: unknown) => {
                  if (err instanceof RateLimiterRes) return false;
                  throw err;
                },
              ),
          });
          // The way in: billing's checkout and pricing page, on the face where the account signs in.
          const checkout = {
            provider: config.payments.apiKey === null ? null : lemonSqueezyProvider({ apiKey: config.payments.apiKey }),
            storeId: config.payments.storeId,
            variantTiers: config.variantTiers,
            signedIn: async (req: Request) => {
              const { account } = await authenticate(req, { secret: config.secrets.jwtSecret, ...config.jwt }, store);
              return { userId: account.userId, email: account.email, name: account.name };
            },
          };
          mountCheckoutRoute(a, checkout);
          mountPricingPage(a, (tier) => checkoutGap(checkout, tier));
          const gap = checkoutGap(checkout);
          if (gap !== null) log.warn(`${gap}: POST /billing/checkout answers 503 and /pricing says so`);
        },
      });
      parts.onStop(() => server.close());
      return { name: 'accounts', url: server.url, stop: () => parts.stopAll((err) => log.error({ err }, 'stop failed')) };
    });
  },
};
