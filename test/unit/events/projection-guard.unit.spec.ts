import { expect } from 'chai';
import fc from 'fast-check';
import type { Document } from 'mongodb';
import { newEvent, type DeliveredEvent } from '../../../events/envelope.ts';
import { applyStored, offsetAtOrAbove, type Projection, type StoredDocument } from '../../../events/projection.ts';
import { usageProjection } from '../../../services/keys/usage.ts';

const keyHash = 'b'.repeat(64);
const period = '2026-11';
const id = `${keyHash}:${period}`;

function used(topic: string, partition: number, offset: number | string, eventId?: string): DeliveredEvent {
  const e = newEvent('usage.incremented', { keyHash, metric: 'queries', amount: 1, period }, eventId ? { eventId } : {});
  return { ...e, position: { topic, partition, offset: String(offset) } } as DeliveredEvent;
}

const apply = (events: readonly DeliveredEvent[], from: StoredDocument<Document> | null = null) =>
  events.reduce<StoredDocument<Document> | null>((doc, e) => applyStored(usageProjection, id, doc, e), from);

describe('projection position guard (unit)', () => {
  it('compares Kafka offsets as numbers, whatever their length', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }), fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }), (a, b) => {
        expect(offsetAtOrAbove(String(a), String(b))).to.equal(a >= b);
      }),
    );
    expect(offsetAtOrAbove('10', '9')).to.equal(true);
    expect(offsetAtOrAbove('9', '10')).to.equal(false);
    expect(offsetAtOrAbove('7', '7')).to.equal(true);
  });

  it('keeps the last 16 event ids per partition, oldest first, and the partitions sorted', () => {
    const events = Array.from({ length: 20 }, (_, i) => used('usage.events', 2, i));
    const doc = apply([...events, used('usage.events', 0, 5), used('a.events', 1, 0)])!;
    expect(doc._v).to.equal(22);
    expect(doc._pos.map((p) => `${p.topic}/${p.partition}`)).to.deep.equal(['a.events/1', 'usage.events/0', 'usage.events/2']);
    const p2 = doc._pos[2]!;
    expect(p2.offset).to.equal('19');
    expect(p2.recent).to.deep.equal(events.slice(4).map((e) => e.metadata.eventId));
  });

  it('skips a redelivery by offset and a re-publish by id, the latter moving the offset on', () => {
    const first = used('usage.events', 0, 8, 'evt-1');
    const doc = apply([first])!;
    expect(apply([used('usage.events', 0, 8)], doc)).to.equal(doc);
    expect(apply([used('usage.events', 0, 3)], doc)).to.equal(doc);
    const again = apply([used('usage.events', 0, 12, 'evt-1')], doc)!;
    expect(again._v).to.equal(1);
    expect(again._pos[0]).to.deep.include({ offset: '12', recent: ['evt-1'] });
    expect((again.counts as { queries: number }).queries).to.equal(1);
  });

  it('leaves a write-once document as its first event made it, whether later events for it come in the same chunk or a later one', () => {
    // A log entry per probe id, first event wins (as the audit log's refusal entries, one per key, code and minute).
    const entries: Projection<Document> = {
      name: 'entries',
      collection: 'entries',
      handles: ['usage.incremented'],
      documentId: () => id,
      evolve: (doc, event) => doc ?? { at: event.metadata.occurredAt, eventId: event.metadata.eventId },
      writeOnce: true,
    };
    const fold = (events: readonly DeliveredEvent[], from: StoredDocument<Document> | null = null) =>
      events.reduce<StoredDocument<Document> | null>((doc, e) => applyStored(entries, id, doc, e), from);
    const first = used('usage.events', 0, 4, 'evt-1');
    const copy = used('usage.events', 0, 9, 'evt-1');
    const other = used('usage.events', 0, 11, 'evt-2');
    // A later chunk finds the document and leaves it: what one chunk folds must be the same.
    const alone = fold([first])!;
    expect(fold([first, copy])).to.deep.equal(alone);
    expect(fold([first, other])).to.deep.equal(alone);
    expect(fold([first, copy, other])).to.deep.equal(alone);
    expect(fold([copy, other], alone)).to.equal(alone);
  });
});
