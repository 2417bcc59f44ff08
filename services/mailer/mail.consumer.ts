import type { EventHandler } from '../../events/consumer.ts';
import type { Event } from '../../events/envelope.ts';
import { errorMessage, TransientError } from '../../events/errors.ts';
import type { Logger } from '../platform/logger.ts';
import type { Effects } from './effects.ts';
import type { OwedMail } from './owed-mail.ts';
import type { Mailer } from './transport.ts';

/** Sends each owed e-mail once: the effect is claimed before sending, however often the event comes. */
export function mailHandler(effects: Effects, mailer: Mailer, owed: (event: Event) => OwedMail | null, log: Logger): EventHandler {
  return {
    async handle(events) {
      for (const event of events) {
        const due = owed(event);
        if (!due) continue;
        if (!(await effects.claim(due.effect))) continue;
        try {
          await mailer.send(due.mail);
        } catch (err) {
          await effects.release(due.effect);
          // An SMTP outage is waited out by the runner, not dead-lettered.
          throw new TransientError(`e-mail not sent: ${errorMessage(err)}`, { cause: err });
        }
        await effects.done(due.effect);
        log.info({ effect: due.effect, eventId: event.metadata.eventId }, 'e-mail sent');
      }
    },
  };
}
