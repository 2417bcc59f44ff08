import { ConsumerRunner } from '../../events/consumer.ts';
import { ProjectionApplier, ensureIndexes, projectionGroupId } from '../../events/projection.ts';
import { Effects } from '../mailer/effects.ts';
import { createApp } from '../platform/http/app.ts';
import type { Runtime } from '../platform/runtime.ts';
import { listen, type ServiceModule } from '../platform/service.ts';
import { mountGenerateRoute } from './generate.route.ts';
import { issuerHandler } from './issuer.consumer.ts';
import { keysProjection } from './keys.projection.ts';

const topicsOf = (rt: Runtime, types: readonly string[]) => [...new Set(types.map((t) => rt.catalog.topicOf(t)))];

/** The key-validation service: the keys projection, the issuer, and its HTTP face on KEYS_PORT. */
export const keysService: ServiceModule = {
  name: 'keys',
  description: 'API keys: POST /generate, the issuer of subscription keys, the keys projection',
  async start(rt) {
    const { config, mongo } = rt;
    const log = rt.log.child({ service: 'keys' });
    await ensureIndexes(mongo.db, keysProjection);
    const common = { kafka: rt.kafka, codec: rt.codec, publisher: rt.publisher, log, retries: config.kafka.handlerRetries };
    const projection = new ConsumerRunner({
      ...common,
      groupId: rt.groupId(projectionGroupId(keysProjection)),
      topics: topicsOf(rt, keysProjection.handles),
      handler: new ProjectionApplier(mongo.db, keysProjection),
    });
    const issuer = new ConsumerRunner({
      ...common,
      groupId: rt.groupId('issuer'),
      topics: topicsOf(rt, ['subscription.created']),
      handler: issuerHandler({ db: mongo.db, publisher: rt.publisher, effects: new Effects(mongo.db), encryptionKey: config.secrets.keyEncryptionKey, log }),
    });
    await projection.start();
    await issuer.start();
    const app = createApp({ service: 'keys', log, bodyLimit: config.http.bodyLimit, health: rt.health }, (a) =>
      mountGenerateRoute(a, { config, db: mongo.db, publisher: rt.publisher }),
    );
    const server = await listen(app, config.http.host, config.ports.keys);
    return {
      name: 'keys',
      url: server.url,
      async stop() {
        await server.close();
        await issuer.stop();
        await projection.stop();
      },
    };
  },
};
