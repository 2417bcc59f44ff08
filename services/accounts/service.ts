import { ConsumerRunner } from '../../events/consumer.ts';
import { OutboxRelay } from '../../events/outbox.ts';
import { ProjectionApplier, ensureIndexes, projectionGroupId } from '../../events/projection.ts';
import { createApp } from '../platform/http/app.ts';
import { listen, type ServiceModule } from '../platform/service.ts';
import { AccountStore } from './account-store.ts';
import { LoginLimiter } from './login-limiter.ts';
import { Passwords } from './password.ts';
import { mountAccountRoutes } from './routes.ts';
import { usersProjection } from './users.projection.ts';

/** The account service: HTTP face on ACCOUNTS_PORT, the users projection, the sign-up outbox relay. */
export const accountsService: ServiceModule = {
  name: 'accounts',
  description: 'sign-up, login and current user (POST /auth/signup, POST /auth/login, GET /auth/me)',
  async start(rt) {
    const { config, mongo } = rt;
    const log = rt.log.child({ service: 'accounts' });
    const store = new AccountStore(mongo.db, rt.codec, rt.publisher, log);
    await store.ensureIndexes();
    await ensureIndexes(mongo.db, usersProjection);

    const projection = new ConsumerRunner({
      kafka: rt.kafka,
      codec: rt.codec,
      publisher: rt.publisher,
      log,
      groupId: rt.groupId(projectionGroupId(usersProjection)),
      topics: [...new Set(usersProjection.handles.map((t) => rt.catalog.topicOf(t)))],
      handler: new ProjectionApplier(mongo.db, usersProjection),
      retries: config.kafka.handlerRetries,
    });
    await projection.start();
    const relay = new OutboxRelay([store.relayable], { intervalMs: 5000, graceMs: 30_000, log });
    relay.start();

    const app = createApp({ service: 'accounts', log, bodyLimit: config.http.bodyLimit, health: rt.health }, (a) =>
      mountAccountRoutes(a, {
        config,
        db: mongo.db,
        store,
        passwords: new Passwords(config.bcryptCost),
        limiter: new LoginLimiter({ perIpPerMinute: config.loginLimits.perIpPerMinute, failuresPerEmailPer15Min: config.loginLimits.failuresPerEmail }),
      }),
    );
    const server = await listen(app, config.http.host, config.ports.accounts);
    return {
      name: 'accounts',
      url: server.url,
      async stop() {
        await server.close();
        await relay.stop();
        await projection.stop();
      },
    };
  },
};
