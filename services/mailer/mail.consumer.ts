import { eachEventOf, type EventHandler, type HandlerContext } from '../../events/consumer.ts';
import type { Effects } from '../../events/effects.ts';
import { PermanentError, TransientError } from '../../events/errors.ts';
import type { Logger } from '../platform/logger.ts';
import { mailMetrics } from './metrics.ts';
import { MAIL_EVENT_TYPES, type MailEvent, type OwedMail } from './owed-mail.ts';
import { classifySmtpFailure } from './smtp-errors.ts';
import type { Mailer } from './transport.ts';

/** Options of the mail handler. */
export interface MailHandlerOptions {
  /**
   * Resolves when the e-mail may leave (e.g. its key answers at /validate); throws (transient) to
   * have the event retried. Runs beside the claim, so it costs no extra round trip when ready.
   */
  ready?: (event: MailEvent, context: HandlerContext) => Promise<void>;
}

/**
 * Sends each owed e-mail once: the effect is claimed before sending, however often the event comes;
 * an effect left claimed by a process that died is taken over once its lease ends (Effects), so a
 * crash between claim and send delays the e-mail instead of losing it.
 */
export function mailHandler(
  effects: Effects,
  mailer: Mailer,
  owed: (event: MailEvent) => OwedMail | null,
  log: Logger,
  options: MailHandlerOptions = {},
): EventHandler {
  const { ready } = options;
  return eachEventOf<MailEvent>(MAIL_EVENT_TYPES, async (event, context) => {
    const due = owed(event);
    if (!due) return;
    let claim: Awaited<ReturnType<Effects['claim']>>;
    if (ready) {
      const [readiness, claimed] = await Promise.allSettled([ready(event, context), effects.claim(due.effect)]);
      if (claimed.status === 'rejected') throw claimed.reason;
      claim = claimed.value;
      if (claim.outcome === 'done') return;
      if (readiness.status === 'rejected') {
        // Not yet: give the claim back at once so the retry (or a new owner) is not kept out.
        await effects.release(due.effect);
        throw readiness.reason;
      }
    } else {
      claim = await effects.claim(due.effect);
      if (claim.outcome === 'done') return;
    }
    if (claim.performed) {
      await effects.done(due.effect);
      return;
    }
    try {
      log.debug({ effect: due.effect }, 'e-mail sending');
      await mailer.send(due.mail);
      effects.performed(due.effect);
      mailMetrics.sent.inc({ event_type: event.type });
      log.debug({ effect: due.effect }, 'e-mail handed to SMTP');
    } catch (err) {
      const failure = classifySmtpFailure(err);
      mailMetrics.failed.inc({ event_type: event.type, failure: failure.kind });
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
