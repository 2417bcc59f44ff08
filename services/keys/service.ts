import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Document } from 'mongodb';
import { ConsumerRunner } from '../../events/consumer.ts';
import type { Projection } from '../../events/projection.ts';
import { SUBSCRIPTION_EVENT_TYPES } from '../billing/events.ts';
import { Effects } from '../mailer/effects.ts';
import type { ServiceModule } from '../platform/service.ts';
import { serveHttp, startConsumer, startProjection } from '../platform/wiring.ts';
import { mountGenerateRoute } from './generate.route.ts';
import { issuerHandler } from './issuer.consumer.ts';
import { KeyCache } from './key-cache.ts';
import { TtlCache } from './ttl-cache.ts';
import type { UsageCounts } from './usage.ts';
import { keysProjection } from './keys.projection.ts';
import { RateLimits } from './rate-limits.ts';
import { mountRevokeRoute } from './revoke.route.ts';
import { usageProjection } from './usage.ts';
import { mountValidationRoutes } from './validate.route.ts';
import { LocalValidator } from './validator.ts';

/** The key-validation service: keys and usage projections, the issuer, and its HTTP face on KEYS_PORT. */
export const keysService: ServiceModule = {
  name: 'keys',
  description: 'API keys: POST /validate, GET /usage, POST /generate, POST /revoke; the issuer; keys and usage projections',
  async start(rt) {
    const { config, mongo } = rt;
    const log = rt.log.child({ service: 'keys' });
    const projection = await startProjection(rt, log, keysProjection as unknown as Projection<Document>);
    const usage = await startProjection(rt, log, usageProjection as unknown as Projection<Document>);
    const issuer = await startConsumer(rt, log, {
      group: 'issuer',
      eventTypes: ['subscription.created'],
      handler: issuerHandler({ db: mongo.db, publisher: rt.publisher, effects: new Effects(mongo.db), encryptionKey: config.secrets.keyEncryptionKey, log }),
    });
    const cache = new KeyCache();
    const usageCache = new TtlCache<UsageCounts>();
    // Every process evicts from its own cache, so each needs all events: a group of its own, from now on.
    const cacheGroup = rt.groupId(`key-cache.${hostname()}.${process.pid}.${randomUUID().slice(0, 8)}`);
    const evictions = new ConsumerRunner({
      kafka: rt.kafka,
      codec: rt.codec,
      publisher: rt.publisher,
      log,
      groupId: cacheGroup,
      fromBeginning: false,
      topics: [...new Set(['key.generated', 'usage.incremented', ...SUBSCRIPTION_EVENT_TYPES].map((t) => rt.catalog.topicOf(t)))],
      handler: {
        async handle(events) {
          for (const e of events) {
            const d = e.data as { keyHash?: string; subscriptionId?: string; period?: string };
            if (e.type === 'usage.incremented') {
              usageCache.evict(`${d.keyHash}:${d.period}`);
              continue;
            }
            if (d.keyHash) cache.evictKey(d.keyHash);
            if (d.subscriptionId) cache.evictSubscription(d.subscriptionId);
          }
        },
      },
    });
    await evictions.start();
    const rateLimits = new RateLimits(mongo.client, mongo.db.databaseName);
    const { ttl } = await rateLimits.ensureIndexes();
    // Without TTL indexes (FerretDB) ended windows are swept here; MongoDB expires them itself.
    const sweeper = ttl
      ? undefined
      : setInterval(() => void rateLimits.sweep().catch((err: unknown) => log.warn({ err: String(err) }, 'rate-limit sweep failed')), 60_000);
    sweeper?.unref();
    const validator = new LocalValidator(mongo.db, rateLimits, cache, usageCache);
    const server = await serveHttp(rt, log, {
      service: 'keys',
      port: config.ports.keys,
      mount: (a) => {
        mountValidationRoutes(a, { validator });
        mountGenerateRoute(a, { config, db: mongo.db, publisher: rt.publisher });
        mountRevokeRoute(a, { config, db: mongo.db, publisher: rt.publisher });
      },
    });
    return {
      name: 'keys',
      url: server.url,
      async stop() {
        await server.close();
        clearInterval(sweeper);
        await evictions.stop();
        await rt.admin.deleteGroups([cacheGroup]).catch(() => undefined);
        await issuer.stop();
        await usage.stop();
        await projection.stop();
      },
    };
  },
};
