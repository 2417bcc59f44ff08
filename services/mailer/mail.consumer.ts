import { eachEventOf, type EventHandler } from '../../events/consumer.ts';
import type { Effects } from '../../events/effects.ts';
import { PermanentError, TransientError } from '../../events/errors.ts';
import type { Logger } from '../platform/logger.ts';
import { MAIL_EVENT_TYPES, type MailEvent, type OwedMail } from './owed-mail.ts';
import { classifySmtpFailure } from './smtp-errors.ts';
import type { Mailer } from './transport.ts';

/**
 * Sends each owed e-mail once: the effect is claimed before sending, however often the event comes;
 * an effect left claimed by a process that died is taken over once its lease ends (Effects), so a
 * crash between claim and send delays the e-mail instead of losing it.
 */
export function mailHandler(effects: Effects, mailer: Mailer, owed: (event: MailEvent) => OwedMail | null, log: Logger): EventHandler {
  return eachEventOf<MailEvent>(MAIL_EVENT_TYPES, async (event) => {
    const due = owed(event);
    if (!due) return;
    const claim = await effects.claim(due.effect);
    if (claim.outcome === 'done') return;
    if (claim.performed) {
      await effects.done(due.effect);
      return;
    }
    try {
      await mailer.send(due.mail);
      effects.performed(due.effect);
    } catch (err) {
      const failure = classifySmtpFailure(err);
      if (failure.kind === 'permanent') {
        await effects.fail(due.effect, failure.reason);
        log.warn({ effect: due.effect, reason: failure.reason }, 'e-mail refused for good; dead-lettered');
        throw new PermanentError(`e-mail ${due.effect} refused: ${failure.reason}`);
      }
      await effects.release(due.effect);
      if (failure.kind === 'transient') throw new TransientError(`e-mail not sent: ${failure.reason}`);
      throw new Error(`e-mail not sent: ${failure.reason}`);
    }
    await effects.done(due.effect);
    log.info({ effect: due.effect, eventId: event.metadata.eventId }, 'e-mail sent');
  });
}
