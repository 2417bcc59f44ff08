import { Parts } from '../platform/parts.ts';
import type { ServiceModule } from '../platform/service.ts';
import { startConsumer } from '../platform/wiring.ts';
import { Effects } from '../../events/effects.ts';
import type { DeliveredEvent } from '../../events/envelope.ts';
import { appliedHereTo, findStoredById } from '../../events/projection.ts';
import type { KeyGenerated } from '../keys/events.ts';
import { keysProjection } from '../keys/keys.projection.ts';
import { NotProjectedYet, waitForKey, waitUntilApplied } from './key-ready.ts';
import { teamLinkApplied, type TeamLinkEvent } from './team-link-ready.ts';
import { workspacesProjection } from '../teams/workspaces.projection.ts';
import { mailHandler } from './mail.consumer.ts';
import { MAIL_EVENT_TYPES, owedMail } from './owed-mail.ts';
import { smtpMailer } from './transport.ts';

/** The mailer: consumes the events that owe someone an e-mail and sends each exactly once. */
export const mailerService: ServiceModule = {
  name: 'mailer',
  description: 'sends the e-mails events owe: welcome, API key, team invitation, cancellation, payment failed, subscription ended',
  async start(rt) {
    const { config } = rt;
    const log = rt.log.child({ service: 'mailer' });
    const parts = new Parts();
    return parts.starting(async () => {
      const mailer = smtpMailer(config.smtp.url, config.smtp.from);
      parts.onStop(() => mailer.close());
      const settings = {
        keyEncryptionKey: config.secrets.keyEncryptionKey,
        reactivateUrl: config.urls.reactivate,
        pricingUrl: config.urls.pricing,
        consoleUrl: config.publicConsoleUrl,
      };
      parts.add(
        await startConsumer(rt, log, {
          group: 'mailer',
          eventTypes: MAIL_EVENT_TYPES,
          handler: mailHandler(
            new Effects(rt.mongo.db, { owner: rt.instanceId, leaseMs: config.effectLeaseMs }),
            mailer,
            (e) => owedMail(e, settings),
            log,
            {
              // A key is mailed only once /validate can answer it: the keys projection holds it. An
              // invitation or a domain proof only once its link is answered: the workspaces projection holds it.
              ready: async (event, { signal }) => {
                // Where the writer (the issuer, the team routes) runs in this process too, its write is waited
                // for, not raced by reads, and an event it applied here needs no read to be known applied.
                if (event.type === 'key.generated') {
                  const generated = event as DeliveredEvent<KeyGenerated>;
                  if (await appliedHereTo(rt.mongo.db, keysProjection, generated.data.subscriptionId, generated)) return;
                  await waitForKey((id) => findStoredById(rt.mongo.db, keysProjection, id), generated, { signal });
                } else if (event.type === 'team.member-invited' || event.type === 'team.sso-domain-proof-requested') {
                  const team = event as DeliveredEvent<TeamLinkEvent>;
                  if (await appliedHereTo(rt.mongo.db, workspacesProjection, team.data.subscriptionId, team)) return;
                  await waitUntilApplied(
                    () => findStoredById(rt.mongo.db, workspacesProjection, team.data.subscriptionId),
                    (stored) => teamLinkApplied(stored, team),
                    (waited) => new NotProjectedYet(`the ${event.type} of workspace ${team.data.subscriptionId}`, waited),
                    { signal },
                  );
                }
              },
            },
          ),
        }),
      );
      return { name: 'mailer', stop: () => parts.stopAll((err) => log.error({ err }, 'stop failed')) };
    });
  },
};
