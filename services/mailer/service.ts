import { ConsumerRunner } from '../../events/consumer.ts';
import type { ServiceModule } from '../platform/service.ts';
import { Effects } from './effects.ts';
import { smtpMailer } from './transport.ts';
import { welcomeHandler } from './welcome.consumer.ts';

/** The mailer: consumes the events that owe someone an e-mail and sends each exactly once. */
export const mailerService: ServiceModule = {
  name: 'mailer',
  description: 'sends e-mails owed by events (welcome)',
  async start(rt) {
    const log = rt.log.child({ service: 'mailer' });
    const mailer = smtpMailer(rt.config.smtp.url, rt.config.smtp.from);
    const runner = new ConsumerRunner({
      kafka: rt.kafka,
      codec: rt.codec,
      publisher: rt.publisher,
      log,
      groupId: 'mailer',
      topics: [rt.catalog.topicOf('account.registered')],
      handler: welcomeHandler(new Effects(rt.mongo.db), mailer, log),
      retries: rt.config.kafka.handlerRetries,
    });
    await runner.start();
    return {
      name: 'mailer',
      async stop() {
        await runner.stop();
        mailer.close();
      },
    };
  },
};
