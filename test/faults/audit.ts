import { projectionCollection } from '../../events/collections.ts';
import { projectionGroupId } from '../../events/projection.ts';
import { replayProjection } from '../../events/replay.ts';
import { committedOffsets, partitionsOf, readToEnd } from '../../events/topic-range.ts';
import { dlqTopic } from '../../events/topics.ts';
import type { KeyGeneratedData } from '../../services/keys/events.ts';
import { MAIL_EVENT_TYPES } from '../../services/mailer/owed-mail.ts';
import { PROJECTIONS } from '../../app/registry.ts';
import type { Runtime } from '../../services/platform/runtime.ts';
import { eventually } from '../support/env.ts';
import { explainedByKill, type MailerKill } from './mail-copies.ts';
import type { TrafficRecord } from './traffic.ts';

/** Every count must be 0. */
export interface Audit {
  'webhooks answered 200 but not applied': number;
  'keys issued twice': number;
  'e-mails missing': number;
  'e-mails sent twice, not explained by a kill': number;
  'sign-ups answered 201 without an account': number;
  'projection documents that differ from a replay': number;
  'healthy events dead-lettered': number;
  'requests never answered (client gave up)': number;
}

interface MailSummary {
  MessageID: string;
  /** When the SMTP sink accepted it (ISO 8601, ms). */
  Created: string;
}

/** What the audit found; every count in `counts` must be 0. */
export interface AuditResult {
  counts: Audit;
  /** Copies re-sent because a mailer was killed inside SMTP's accept-to-record window (same Message-ID). */
  resentAfterKill: number;
}

export interface AuditOptions {
  /** Each SIGKILL of a mailer process: when (epoch ms) and its pid. */
  mailerKills?: readonly MailerKill[];
  /** EFFECT_LEASE_MS of the run: a re-send comes after it. */
  effectLeaseMs?: number;
}

/** The consumer groups of the services, with the event types each reads: all must have read everything. */
function groups(rt: Runtime): { group: string; topics: string[] }[] {
  const byGroup: [string, readonly string[]][] = [
    ...PROJECTIONS.map((p): [string, readonly string[]] => [projectionGroupId(p), p.handles]),
    ['issuer', ['subscription.created']],
    ['billing', ['payment.webhook-received']],
    ['mailer', MAIL_EVENT_TYPES],
  ];
  return byGroup.map(([group, types]) => ({ group: rt.groupId(group), topics: rt.catalog.topicsOf(types) }));
}

async function lagging(rt: Runtime): Promise<string[]> {
  const behind: string[] = [];
  for (const { group, topics } of groups(rt)) {
    for (const topic of topics) {
      const committed = await committedOffsets(rt.admin, group, topic);
      for (const p of await partitionsOf(rt.admin, topic)) {
        if ((committed.get(p.partition) ?? p.low) < p.high) behind.push(`${group} ${topic}/${p.partition}`);
      }
    }
  }
  return behind;
}

async function allMail(mailpitUrl: string): Promise<MailSummary[]> {
  const out: MailSummary[] = [];
  for (let start = 0; ; start += 1000) {
    const res = await fetch(`${mailpitUrl}/api/v1/messages?start=${start}&limit=1000`);
    const page = (await res.json()) as { messages: MailSummary[]; total: number };
    out.push(...page.messages);
    if (page.messages.length < 1000) return out;
  }
}

/** Waits until every consumer group has read everything and no sign-up waits for the outbox relay. */
export async function settle(rt: Runtime, log: (line: string) => void): Promise<void> {
  await eventually(
    'every consumer group caught up and no sign-up pending',
    async () => {
      const behind = await lagging(rt);
      const pending = await rt.mongo.db.collection('accounts').countDocuments({ 'outbox.pending': true });
      if (behind.length === 0 && pending === 0) return true;
      const groupsBehind = [...new Set(behind.map((b) => b.split(' ')[0]))];
      log(`  settling: ${behind.length} partition(s) behind (${groupsBehind.join(', ') || 'none'}), ${pending} sign-up(s) pending`);
      return undefined;
    },
    300_000,
  );
}

export async function audit(
  rt: Runtime,
  mailpitUrl: string,
  traffic: TrafficRecord,
  log: (line: string) => void,
  options: AuditOptions = {},
): Promise<AuditResult> {
  const db = rt.mongo.db;

  // Sign-ups: every 201 names a stored account, and the read model has it.
  let signUpsWithoutAccount = 0;
  const users = await projectionCollection(db, 'users');
  for (const s of traffic.signedUp) {
    const account = await db.collection('accounts').findOne({ _id: s.email as never });
    const user = await users.findOne({ _id: s.userId as never });
    if (account?.userId !== s.userId || user?.email !== s.email) signUpsWithoutAccount++;
  }

  // Webhooks: every subscription answered 200 exists, is active, and has a pro key.
  let notApplied = 0;
  const subscriptions = await projectionCollection(db, 'subscriptions');
  const keys = await projectionCollection(db, 'keys');
  for (const s of traffic.subscribed) {
    const sub = await subscriptions.findOne({ _id: s.subscriptionId as never });
    const key = await keys.findOne({ _id: s.subscriptionId as never });
    if (sub?.status !== 'active' || typeof key?.keyHash !== 'string' || key.tier !== 'pro') notApplied++;
  }

  // Keys: one key per subscription in the log itself, whatever the projection adopted.
  const hashes = new Map<string, Set<string>>();
  await readToEnd({
    kafka: rt.kafka,
    admin: rt.admin,
    topic: rt.catalog.topicOf('key.generated'),
    groupId: rt.groupId(`faults-audit-keys-${Date.now()}`),
    mode: 'all',
    onMessage: async (_partition, message) => {
      await rt.codec.prepare([message]);
      const event = rt.codec.decode(message);
      if (event.type !== 'key.generated') return;
      const d = event.data as KeyGeneratedData;
      const set = hashes.get(d.subscriptionId) ?? new Set<string>();
      set.add(d.keyHash);
      hashes.set(d.subscriptionId, set);
    },
  });
  const keysTwice = [...hashes.values()].filter((set) => set.size > 1).length;

  // E-mail: exactly one welcome per account and one key e-mail per subscription, by Message-ID.
  const copies = new Map<string, number[]>();
  for (const m of await allMail(mailpitUrl)) {
    const id = m.MessageID.replace(/^<|>$/g, '');
    copies.set(id, [...(copies.get(id) ?? []), Date.parse(m.Created)]);
  }
  const expected = [
    ...traffic.signedUp.map((s) => `welcome.${s.userId}@svc.local`),
    ...traffic.subscribed.map((s) => `key.${s.subscriptionId}@svc.local`),
  ];
  const missing = expected.filter((id) => (copies.get(id)?.length ?? 0) === 0).length;
  let twice = 0;
  let resentAfterKill = 0;
  // The effect each Message-ID is the e-mail of (services/mailer/owed-mail.ts), whose record says whom its claim was taken from.
  const effectOf = (messageId: string): string | undefined => {
    const welcome = /^welcome\.(.+)@svc\.local$/.exec(messageId);
    if (welcome) return `welcome-email:${welcome[1]}`;
    const key = /^key\.(.+)@svc\.local$/.exec(messageId);
    const hash = key ? [...(hashes.get(key[1] ?? '') ?? [])][0] : undefined;
    return hash ? `key-email:${hash}` : undefined;
  };
  for (const [id, created] of copies) {
    if (created.length < 2) continue;
    const effect = effectOf(id);
    const record = effect ? await db.collection<{ _id: string; previousOwners?: string[] }>('effects').findOne({ _id: effect }) : null;
    const explained = explainedByKill(created, options.mailerKills ?? [], record?.previousOwners ?? [], options.effectLeaseMs ?? 30_000);
    if (explained) resentAfterKill += created.length - 1;
    else twice += created.length - 1;
    const when = created.map((t) => new Date(t).toISOString().slice(11, 23)).join(', ');
    log(
      `  ${created.length} copies of ${id} accepted at ${when}, claim taken from ${JSON.stringify(record?.previousOwners ?? [])}: ${explained ? 'the killed mailer sent the first and died before its record' : 'NOT explained by a kill'}`,
    );
  }

  // Projections: what the live consumers built equals what a replay of the log builds.
  let differing = 0;
  for (const projection of PROJECTIONS) {
    const before = await (await projectionCollection(db, projection.collection)).find().toArray();
    const result = await replayProjection({
      kafka: rt.kafka,
      codec: rt.codec,
      catalog: rt.catalog,
      publisher: rt.publisher,
      db,
      projection,
      log: rt.log,
    });
    const after = new Map(
      (await (await projectionCollection(db, projection.collection)).find().toArray()).map((d) => [String(d._id), JSON.stringify(d)]),
    );
    let differs = 0;
    const how: string[] = [];
    const live = new Set<string>();
    for (const doc of before) {
      const id = String(doc._id);
      live.add(id);
      const rebuilt = after.get(id);
      if (rebuilt === JSON.stringify(doc)) continue;
      differs++;
      if (rebuilt === undefined) how.push(`${id}: not in the replay`);
      else {
        const replayed = JSON.parse(rebuilt) as Record<string, unknown>;
        const fields = [...new Set([...Object.keys(doc), ...Object.keys(replayed)])].filter(
          (f) => JSON.stringify((doc as Record<string, unknown>)[f]) !== JSON.stringify(replayed[f]),
        );
        how.push(`${id}: ${fields.join(', ')} differ`);
      }
    }
    for (const id of after.keys()) {
      if (live.has(id)) continue;
      differs++;
      how.push(`${id}: only in the replay (not applied live when the live documents were read)`);
    }
    log(`  replayed ${projection.name}: ${result.messages} events, ${result.documents} documents, ${differs} differ`);
    // Which, and how, so a failed run can be followed up without its data (document ids, field names; no values).
    for (const line of how.slice(0, 5)) log(`    ${line}`);
    differing += differs;
  }

  let deadLettered = 0;
  for (const topic of rt.catalog.topics()) {
    for (const p of await partitionsOf(rt.admin, dlqTopic(topic))) deadLettered += Number(p.high - p.low);
  }

  const counts: Audit = {
    'webhooks answered 200 but not applied': notApplied,
    'keys issued twice': keysTwice,
    'e-mails missing': missing,
    'e-mails sent twice, not explained by a kill': twice,
    'sign-ups answered 201 without an account': signUpsWithoutAccount,
    'projection documents that differ from a replay': differing,
    'healthy events dead-lettered': deadLettered,
    'requests never answered (client gave up)': traffic.gaveUp,
  };
  return { counts, resentAfterKill };
}
