import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Express } from 'express';
import { CACHE_FEED_GROUP, startCacheFeed, sweepAbandonedFeedGroups } from '../../events/cache-feed.ts';
import { ProjectionCache } from '../../events/projection-cache.ts';
import { findStoredById, findStoredByIds, projectionGroupId } from '../../events/projection.ts';
import { Effects } from '../../events/effects.ts';
import { Parts } from '../platform/parts.ts';
import type { ServiceModule } from '../platform/service.ts';
import { serveHttp, startConsumer, startProjection } from '../platform/wiring.ts';
import { mountGenerateRoute } from './generate.routes.ts';
import { issuerHandler } from './issuer.consumer.ts';
import { memberKeysHandler } from './member-keys.consumer.ts';
import { mountTeamRoutes } from '../teams/team.routes.ts';
import { mountSsoConfigRoutes } from '../teams/sso-config.routes.ts';
import { SsoDomainClaims } from '../teams/sso-domain-claims.ts';
import { DOMAIN_PROOFS_PER_HOUR, mountSsoDomainProofRoutes } from '../teams/sso-domain-proof.routes.ts';
import { workspacesProjection } from '../teams/workspaces.projection.ts';
import { KeyCache } from './key-cache.ts';
import { findStoredKey, keysProjection } from './keys.projection.ts';
import { RateLimits } from './rate-limits.ts';
import { mountRevokeRoute } from './revoke.routes.ts';
import { mountRotateRoute } from './rotate.routes.ts';
import { mountLimitsRoute } from './limits.routes.ts';
import { auditLog, auditProjection } from '../audit/audit.projection.ts';
import { mountAuditRoute } from '../audit/audit.routes.ts';
import { LONGEST_RETENTION_DAYS } from '../audit/retention.ts';
import { keyFactsOf } from './key-facts.ts';
import { RefusalEvents } from './refusal-events.ts';
import { every, HOUR_MS } from '../platform/periodic.ts';
import { VerificationCounts } from './verifications.ts';
import { RotationLimit } from './rotation-limit.ts';
import { AccountStore } from '../accounts/account-store.ts';
import { QuotaReservations } from './quota-reservations.ts';
import { mountReserveRoutes } from './reserve.routes.ts';
import { currentPeriod, usageProjection } from './usage.ts';
import { keysAdminApi, keysApi } from './keys.api.ts';
import { LEAN_VALIDATE_ROUTE, leanValidate } from './validate-lean.ts';
import { mountValidationRoutes } from './validate.routes.ts';
import { LocalValidator } from './validator.ts';

const INVITATIONS_PER_HOUR = 30;

/** The key-validation service: keys and usage projections, the issuer, and its HTTP face on KEYS_PORT. */
export const keysService: ServiceModule = {
  name: 'keys',
  description:
    'API keys: POST /validate, GET /usage, POST /reserve, POST /release, POST /keys/rotate, POST /generate, POST /revoke; the issuer; keys and usage projections',
  async start(rt) {
    const { config, mongo } = rt;
    const log = rt.log.child({ service: 'keys' });
    const parts = new Parts();
    return parts.starting(async () => {
      // Followed by the caches below: their committed offsets say how far the database has applied.
      parts.add(await startProjection(rt, log, keysProjection, { followed: true }));
      parts.add(await startProjection(rt, log, usageProjection, { followed: true }));
      // The audit log's projection runs where GET /audit is answered.
      parts.add(await startProjection(rt, log, auditProjection));
      // The team workspaces' projection runs where the team routes are answered and member keys minted.
      parts.add(await startProjection(rt, log, workspacesProjection));
      parts.add(
        every(
          HOUR_MS,
          async () => {
            await (await auditLog(mongo.db)).deleteMany({ at: { $lt: new Date(Date.now() - LONGEST_RETENTION_DAYS * 86_400_000) } });
          },
          log,
          'the audit log retention sweep',
        ),
      );
      parts.add(
        await startConsumer(rt, log, {
          group: 'issuer',
          eventTypes: ['subscription.created'],
          handler: issuerHandler({
            db: mongo.db,
            publisher: rt.publisher,
            effects: new Effects(mongo.db, { owner: rt.instanceId, leaseMs: config.effectLeaseMs }),
            encryptionKey: config.secrets.keyEncryptionKey,
            log,
          }),
        }),
      );
      parts.add(
        await startConsumer(rt, log, {
          group: 'member-keys',
          eventTypes: ['team.member-joined'],
          handler: memberKeysHandler({
            db: mongo.db,
            publisher: rt.publisher,
            effects: new Effects(mongo.db, { owner: rt.instanceId, leaseMs: config.effectLeaseMs }),
            encryptionKey: config.secrets.keyEncryptionKey,
            log,
          }),
        }),
      );
      // Keys and usage in memory, following the log beside the projections they cache. Every process
      // keeps its own caches, so its feed is a group of its own that starts at the end of the topics.
      const keyCache = new KeyCache(rt.catalog.topicsOf(keysProjection.handles), {
        loadById: (id) => findStoredById(mongo.db, keysProjection, id),
        loadMany: (ids) => findStoredByIds(mongo.db, keysProjection, ids),
        loadByHash: (keyHash) => findStoredKey(mongo.db, keyHash),
      });
      const usageCache = new ProjectionCache(usageProjection, rt.catalog.topicsOf(usageProjection.handles), {
        load: (id) => findStoredById(mongo.db, usageProjection, id),
        loadMany: (ids) => findStoredByIds(mongo.db, usageProjection, ids),
      });
      // Groups of killed replicas' feeds: they hold no offsets, so the broker drops them by itself; this
      // only makes it sooner. A failure here costs nothing but a listing.
      const swept = await sweepAbandonedFeedGroups(rt.admin, rt.config.kafka.topicPrefix).catch(() => []);
      if (swept.length > 0) log.info({ groups: swept.length }, 'cache feed: removed the groups of replicas gone');
      parts.add(
        await startCacheFeed({
          kafka: rt.kafka,
          admin: rt.admin,
          codec: rt.codec,
          publisher: rt.publisher,
          log,
          groupId: rt.groupId(`${CACHE_FEED_GROUP}${hostname()}.${process.pid}.${randomUUID().slice(0, 8)}`),
          caches: [
            { cache: keyCache.documents, projectionGroup: rt.groupId(projectionGroupId(keysProjection)) },
            { cache: usageCache, projectionGroup: rt.groupId(projectionGroupId(usageProjection)) },
          ],
          onEvents: (events) => keyCache.noteEvents(events),
        }),
      );
      const rateLimits = new RateLimits(mongo.client, mongo.db.databaseName, { perIpPerMinute: config.keyValidationPerIpPerMinute });
      const { ttl } = await rateLimits.ensureIndexes();
      // Without TTL indexes (FerretDB) ended windows are swept here; MongoDB expires them itself.
      const sweeper = ttl
        ? undefined
        : setInterval(
            () => void rateLimits.sweep().catch((err: unknown) => log.warn({ err: String(err) }, 'rate-limit sweep failed')),
            60_000,
          );
      sweeper?.unref();
      parts.onStop(() => clearInterval(sweeper));
      const reservations = new QuotaReservations(mongo.db);
      await reservations.ensureIndexes();
      const monthly = setInterval(
        () =>
          void reservations
            .sweep(currentPeriod())
            .catch((err: unknown) => log.warn({ err: String(err) }, 'quota reservation sweep failed')),
        3_600_000,
      );
      monthly.unref();
      parts.onStop(() => clearInterval(monthly));
      const verifications = new VerificationCounts(mongo.db, { writer: rt.instanceId, log });
      await verifications.ensureIndexes();
      verifications.start(config.verificationFlushMs);
      // Before the server, so it stops after it: the last requests' counts are flushed.
      parts.onStop(() => verifications.stop());
      const refusals = new RefusalEvents(rt.publisher, log);
      refusals.start(1000);
      parts.onStop(() => refusals.stop());
      const validator = new LocalValidator(rateLimits, keyCache, usageCache, reservations, {
        note: (keyHash, subscriptionId, outcome) => {
          verifications.note(keyHash, subscriptionId, outcome);
          refusals.note(keyHash, subscriptionId, outcome);
        },
      });
      const ssoDomains = new SsoDomainClaims(mongo.db);
      await ssoDomains.ensureIndexes();
      const rotationLimit = new RotationLimit(mongo.db, config.keyRotationsPerHour);
      await rotationLimit.ensureIndexes();
      // Team invitations per workspace per hour, on the same hourly slots: each one e-mails someone.
      const invitations = new RotationLimit(mongo.db, INVITATIONS_PER_HOUR);
      // Single sign-on domain proofs per workspace per hour, likewise: each one e-mails an address the owner names.
      const proofMails = new RotationLimit(mongo.db, DOMAIN_PROOFS_PER_HOUR);
      const rotation = {
        db: mongo.db,
        publisher: rt.publisher,
        // Sessions are checked as the accounts service checks them, against the same account store.
        tokens: { secret: config.secrets.jwtSecret, ...config.jwt },
        accounts: new AccountStore(mongo.db, rt.codec, rt.publisher, log),
        encryptionKey: config.secrets.keyEncryptionKey,
        limit: rotationLimit,
        graceSeconds: config.keyRotationGraceSeconds,
        leaseMs: config.effectLeaseMs,
        log,
      };
      const mountBackOffice = (a: Express) => {
        mountGenerateRoute(a, { config, db: mongo.db, publisher: rt.publisher });
        mountRevokeRoute(a, { config, db: mongo.db, publisher: rt.publisher });
      };
      // With ADMIN_PORT, minting and revoking keys are reachable only where operators put that port
      // (a private network), not wherever the validation face is published.
      const adminPort = config.ports.admin;
      const server = await serveHttp(rt, log, {
        service: 'keys',
        port: config.ports.keys,
        lean: leanValidate({ validator, log, service: 'keys' }),
        leanRoutes: [LEAN_VALIDATE_ROUTE],
        api: keysApi({ backOffice: adminPort === undefined }),
        mount: (a) => {
          mountValidationRoutes(a, { validator, verifications, keyFacts: (keyHash) => keyFactsOf(mongo.db, keyHash) });
          mountReserveRoutes(a, { validator });
          // The owner's own route, so on the public port even with ADMIN_PORT.
          mountRotateRoute(a, rotation);
          mountLimitsRoute(a, rotation);
          mountAuditRoute(a, rotation);
          mountTeamRoutes(a, {
            ...rotation,
            encryptionKey: config.secrets.keyEncryptionKey,
            invitationTtlSeconds: config.teamInvitationTtlSeconds,
            invitations,
          });
          mountSsoConfigRoutes(a, {
            ...rotation,
            encryptionKey: config.secrets.keyEncryptionKey,
            allowHttpIssuers: config.sso.allowHttpIssuers,
            redirectUri: config.sso.callbackUrl,
            claims: ssoDomains,
          });
          mountSsoDomainProofRoutes(a, {
            ...rotation,
            encryptionKey: config.secrets.keyEncryptionKey,
            claims: ssoDomains,
            proofMails,
          });
          if (adminPort === undefined) mountBackOffice(a);
        },
      });
      parts.onStop(() => server.close());
      const admin =
        adminPort === undefined
          ? undefined
          : await serveHttp(rt, log, { service: 'keys-admin', port: adminPort, mount: mountBackOffice, api: keysAdminApi });
      if (admin) parts.onStop(() => admin.close());
      return {
        name: 'keys',
        url: server.url,
        ...(admin ? { adminUrl: admin.url } : {}),
        stop: () => parts.stopAll((err) => log.error({ err }, 'stop failed')),
      };
    });
  },
};
