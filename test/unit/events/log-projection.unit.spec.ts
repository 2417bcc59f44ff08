import { expect } from 'chai';
import { newEvent, type DeliveredEvent } from '../../../events/envelope.ts';
import { logProjection } from '../../../events/log-projection.ts';
import { applyStored } from '../../../events/projection.ts';
import type { RagEvent } from '../../../services/rag/events.ts';

describe('events/log-projection: one write-once document per event (unit)', () => {
  const log = logProjection<RagEvent, 'rag.query-served', 'keyHash', 'servedAt'>({
    name: 'queries',
    collection: 'queries',
    type: 'rag.query-served',
    id: (d) => d.queryId,
    omit: ['keyHash'],
    at: 'servedAt',
  });
  const served = (queryId: string, offset: number, tookMs: number) =>
    ({
      ...newEvent('rag.query-served', { queryId, keyHash: 'k'.repeat(64), tookMs } as never),
      position: { topic: 'rag.events', partition: 0, offset: String(offset) },
    }) as DeliveredEvent;

  it('is write-once: the runner inserts without reading', () => {
    expect(log.writeOnce).to.equal(true);
  });

  it('keeps the document its first event made, whatever comes later with the same id', () => {
    const first = log.evolve(null, served('q1', 0, 12) as never);
    expect(first).to.include({ queryId: 'q1', tookMs: 12 });
    expect(first, 'the key hash is left out').to.not.have.property('keyHash');
    expect(log.evolve(first, served('q1', 1, 99) as never), 'the same object back').to.equal(first);
  });

  it('applied twice through the guards, the stored fields are those of the first event', () => {
    const once = applyStored(log, 'q1', null, served('q1', 0, 12));
    const twice = applyStored(log, 'q1', once, served('q1', 1, 99));
    expect(twice?.tookMs).to.equal(12);
  });
});
