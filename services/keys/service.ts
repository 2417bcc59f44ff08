import type { Document } from 'mongodb';
import type { Projection } from '../../events/projection.ts';
import { Effects } from '../mailer/effects.ts';
import type { ServiceModule } from '../platform/service.ts';
import { serveHttp, startConsumer, startProjection } from '../platform/wiring.ts';
import { mountGenerateRoute } from './generate.route.ts';
import { issuerHandler } from './issuer.consumer.ts';
import { keysProjection } from './keys.projection.ts';

/** The key-validation service: the keys projection, the issuer, and its HTTP face on KEYS_PORT. */
export const keysService: ServiceModule = {
  name: 'keys',
  description: 'API keys: POST /generate, the issuer of subscription keys, the keys projection',
  async start(rt) {
    const { config, mongo } = rt;
    const log = rt.log.child({ service: 'keys' });
    const projection = await startProjection(rt, log, keysProjection as unknown as Projection<Document>);
    const issuer = await startConsumer(rt, log, {
      group: 'issuer',
      eventTypes: ['subscription.created'],
      handler: issuerHandler({ db: mongo.db, publisher: rt.publisher, effects: new Effects(mongo.db), encryptionKey: config.secrets.keyEncryptionKey, log }),
    });
    const server = await serveHttp(rt, log, {
      service: 'keys',
      port: config.ports.keys,
      mount: (a) => mountGenerateRoute(a, { config, db: mongo.db, publisher: rt.publisher }),
    });
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
