import type { Db } from 'mongodb';
import { eachEventOf, type EventHandler } from '../../events/consumer.ts';
import type { Effects } from '../../events/effects.ts';
import { derivedEventId } from '../../events/envelope.ts';
import { TransientError } from '../../events/errors.ts';
import { findStoredById, offsetAtOrAbove, projectedFields } from '../../events/projection.ts';
import type { EventPublisher } from '../../events/publisher.ts';
import type { Logger } from '../platform/logger.ts';
import type { TeamMemberJoined } from '../teams/events.ts';
import { workspacesProjection, type TeamRecord } from '../teams/workspaces.projection.ts';
import { getKeyBySubscription } from './keys.projection.ts';
import { mintKey } from './new-key.ts';
import { publishClaimedKey, type SavedKey } from './claimed-key.ts';

/**
 * team.member-joined -> the member's own key under the team's subscription, e-mailed to them by the
 * mailer. As the subscription issuer does (issuer.consumer.ts): the minted event is saved with the
 * effect claim before it is published, so a crash never mints a second key for one membership.
 * Only a join the workspace accepted gets a key: the projection is read once it has the event.
 */
export function memberKeysHandler(deps: {
  db: Db;
  publisher: EventPublisher;
  effects: Effects<SavedKey>;
  encryptionKey: Buffer;
  log: Logger;
}): EventHandler {
  const { db, publisher, effects, encryptionKey, log } = deps;
  return eachEventOf<TeamMemberJoined>(['team.member-joined'], async (event) => {
    const d = event.data;
    const stored = await findStoredById(db, workspacesProjection, d.subscriptionId);
    const seen = stored?._pos.find((p) => p.topic === event.position.topic && p.partition === event.position.partition);
    if (!seen || !offsetAtOrAbove(seen.offset, event.position.offset)) {
      throw new TransientError(`the workspace ${d.subscriptionId} has not applied the join ${event.metadata.eventId} yet`);
    }
    const team = projectedFields<TeamRecord>(stored);
    const member = team?.members.find((m) => m.membershipId === d.membershipId);
    const record = await getKeyBySubscription(db, d.subscriptionId);
    // Refused by the workspace (a second accept of one link), already removed, or no longer a team: no key.
    if (!member || record?.tier !== 'team') return;
    // *Choice:* a join while the subscription's key is revoked or expired still gets its key, which is
    // refused for as long as that key is (recordForKey decides at every check), and works once the
    // owner's rotation issues a new one: no join is left without a key, and none mints a working one.
    if (record.members?.some((m) => m.membershipId === d.membershipId)) return;
    const effect = `issue-member-key:${d.membershipId}`;
    const minted = mintKey(
      {
        tier: 'team',
        customerId: record.customerId ?? '',
        subscriptionId: d.subscriptionId,
        email: member.email,
        source: 'member',
        memberUserId: member.userId,
        membershipId: member.membershipId,
      },
      encryptionKey,
      { causedBy: event.metadata, eventId: derivedEventId(`${event.metadata.eventId}:member-key`) },
    ).event;
    const claim = await effects.claim(effect, { event: minted });
    if (claim.outcome === 'done') return;
    await publishClaimedKey({ db, publisher, effects }, effect, claim.saved, minted);
    log.info({ subscriptionId: d.subscriptionId, membershipId: d.membershipId, takenOver: claim.attempts > 1 }, 'member key issued');
    await effects.done(effect);
  });
}
