import type { Admin, Kafka } from 'kafkajs';
import type { Db } from 'mongodb';
import type { EventLog } from './event-log.ts';
import type { EventCatalog } from './catalog.ts';
import type { EventCodec } from './codec.ts';
import { ConsumerRunner } from './consumer.ts';
import type { EventPublisher } from './publisher.ts';
import { DEFAULT_BUFFERED_DOCUMENTS, ProjectionApplier, ensureIndexes, type Projection } from './projection.ts';
import { ALIAS_TTL_MS, swapIn } from './collections.ts';

export interface ReplayProgress {
  phase: 'rebuild' | 'catch-up';
  done: number;
  total: number;
}

export interface ReplayOptions {
  kafka: Kafka;
  codec: EventCodec;
  catalog: EventCatalog;
  publisher: EventPublisher;
  db: Db;
  projection: Projection;
  log: EventLog;
  onProgress?: (p: ReplayProgress) => void;
  /**
   * Documents the rebuild keeps in memory before writing some out (default
   * DEFAULT_BUFFERED_DOCUMENTS); a projection that fits is written once per document.
   */
  bufferedDocuments?: number;
}

export interface ReplayResult {
  /** Log messages read on the projection's topics. */
  messages: number;
  /** Events that changed a document. */
  applied: number;
  /**
   * Documents of the rebuilt collection when it was swapped in (tombstones included), as the
   * rebuild wrote them: not counted by the database, whose count scans the collection on FerretDB.
   */
  documents: number;
  seconds: number;
}

type Targets = Map<string, bigint>; // `${topic}/${partition}` -> offset to reach (high watermark)

async function highWatermarks(admin: Admin, topics: readonly string[]): Promise<{ targets: Targets; low: Targets }> {
  const targets: Targets = new Map();
  const low: Targets = new Map();
  for (const topic of topics) {
    for (const p of await admin.fetchTopicOffsets(topic)) {
      targets.set(`${topic}/${p.partition}`, BigInt(p.high));
      low.set(`${topic}/${p.partition}`, BigInt(p.low));
    }
  }
  return { targets, low };
}

const remaining = (targets: Targets, reached: Targets) =>
  [...targets].reduce((sum, [tp, high]) => sum + (high > (reached.get(tp) ?? 0n) ? high - (reached.get(tp) ?? 0n) : 0n), 0n);

/** Events per handler call during a replay: the rebuild applies them in memory, so bigger is cheaper. */
const REPLAY_CHUNK = 2000;

/**
 * Rebuilds a projection from offset 0 into a shadow collection while the live one keeps serving,
 * swaps the shadow in (rename, or an alias where the server cannot replace a collection by rename),
 * then applies whatever the live consumer wrote to the old collection in
 * between (the position guard makes the overlap harmless).
 *
 * Until the swap nobody but the replay writes the shadow, so the rebuild applies the events in
 * memory and writes each document once (ProjectionApplier.bufferWrites); everything is written
 * before the swap, and from then on writes are guarded against the live consumer as usual.
 */
export async function replayProjection(options: ReplayOptions): Promise<ReplayResult> {
  const { kafka, codec, catalog, publisher, db, projection, log } = options;
  const started = process.hrtime.bigint();
  const topics = catalog.topicsOf(projection.handles);
  const runId = `${Date.now()}-${process.pid}`;
  const shadow = `${projection.collection}__replay_${runId}`;
  const groupId = `replay.${projection.name}.${runId}`;
  const admin = kafka.admin();
  await admin.connect();
  const reached: Targets = new Map();
  let messages = 0;
  let swapped = false;
  let documents = 0;
  const applier = new ProjectionApplier(db, projection, shadow);
  const runner = new ConsumerRunner({
    kafka,
    codec,
    publisher,
    log,
    groupId,
    topics,
    fromBeginning: true,
    handler: applier,
    chunkSize: REPLAY_CHUNK,
  });
  let wake: (() => void) | undefined;
  runner.on(runner.events.END_BATCH_PROCESS, ({ payload }) => {
    const tp = `${payload.topic}/${payload.partition}`;
    const next = BigInt(payload.lastOffset) + 1n;
    const before = reached.get(tp) ?? 0n;
    if (next > before) {
      messages += Number(next - before);
      reached.set(tp, next);
    }
    wake?.();
  });
  const waitFor = async (targets: Targets, phase: ReplayProgress['phase']) => {
    const total = Number([...targets.values()].reduce((a, b) => a + b, 0n));
    for (;;) {
      // A buffered write that failed for good: the runner only waits on it, so give up here.
      if (applier.failure) throw applier.failure;
      const left = remaining(targets, reached);
      options.onProgress?.({ phase, done: total - Number(left), total });
      if (left === 0n) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
        // The check above and this wait race with the batch callback; a short re-check bounds it.
        setTimeout(resolve, 250);
      });
    }
  };

  try {
    await db
      .collection(shadow)
      .drop()
      .catch(() => undefined);
    await db.createCollection(shadow);
    await ensureIndexes(db, projection, shadow);
    applier.bufferWrites({ maxDocuments: options.bufferedDocuments ?? DEFAULT_BUFFERED_DOCUMENTS });
    const first = await highWatermarks(admin, topics);
    for (const [tp, low] of first.low) reached.set(tp, low);
    messages = 0;
    await runner.start();
    await waitFor(first.targets, 'rebuild');
    // Everything applied so far is in the shadow before anyone can read it.
    const rebuiltAt = process.hrtime.bigint();
    documents = await applier.endBuffering();
    log.info(
      { projection: projection.name, messages, documents, writeMs: Math.round(Number(process.hrtime.bigint() - rebuiltAt) / 1e6) },
      'rebuilt collection written',
    );

    const swap = await swapIn(db, projection.collection, shadow);
    swapped = true;
    applier.retarget(undefined);
    log.info({ projection: projection.name, mode: swap.mode }, 'shadow collection swapped in');
    // Live writers may follow a cached alias for up to its TTL; after that every event they apply
    // lands in the new collection, and everything before is below the catch-up target.
    await new Promise((r) => setTimeout(r, swap.mode === 'alias' ? 2 * ALIAS_TTL_MS : 0));
    const second = await highWatermarks(admin, topics);
    await waitFor(second.targets, 'catch-up');
    await swap.retire();
  } finally {
    await runner.stop();
    await admin.deleteGroups([groupId]).catch((err: unknown) => log.warn({ err: String(err), groupId }, 'could not delete replay group'));
    await admin.disconnect();
    if (!swapped)
      await db
        .collection(shadow)
        .drop()
        .catch(() => undefined);
  }
  return {
    messages,
    applied: applier.applied,
    documents,
    seconds: Number(process.hrtime.bigint() - started) / 1e9,
  };
}
