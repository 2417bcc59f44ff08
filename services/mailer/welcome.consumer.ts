import type { EventHandler } from '../../events/consumer.ts';
import { errorMessage, TransientError } from '../../events/errors.ts';
import type { AccountRegisteredData } from '../accounts/events.ts';
import type { Logger } from '../platform/logger.ts';
import type { Effects } from './effects.ts';
import { welcomeMail } from './templates.ts';
import type { Mailer } from './transport.ts';

/** account.registered -> one welcome e-mail per user, however often the event is delivered. */
export function welcomeHandler(effects: Effects, mailer: Mailer, log: Logger): EventHandler {
  return {
    async handle(events) {
      for (const event of events) {
        if (event.type !== 'account.registered') continue;
        const data = event.data as AccountRegisteredData;
        const effect = `welcome-email:${data.userId}`;
        if (!(await effects.claim(effect))) continue;
        try {
          await mailer.send(welcomeMail(data));
        } catch (err) {
          await effects.release(effect);
          // An SMTP outage is waited out by the runner, not dead-lettered.
          throw new TransientError(`welcome e-mail not sent: ${errorMessage(err)}`, { cause: err });
        }
        await effects.done(effect);
        log.info({ userId: data.userId, eventId: event.metadata.eventId }, 'welcome e-mail sent');
      }
    },
  };
}
