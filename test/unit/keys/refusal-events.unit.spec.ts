import { expect } from 'chai';
import type { Event } from '../../../events/envelope.ts';
import { createLogger } from '../../../services/platform/logger.ts';
import { RefusalEvents } from '../../../services/keys/refusal-events.ts';

const HASH = 'b'.repeat(64);
const T0 = Date.parse('2026-11-26T04:41:10.000Z');

describe('keys: refused checks as audit events (unit)', () => {
  it('publishes the first refusal of a key with a code in a minute, once; none for valid checks', async () => {
    const published: Event[][] = [];
    const refusals = new RefusalEvents({ publishOrdered: async (events) => (published.push([...events]), []) }, createLogger('silent'));
    refusals.note(HASH, 'sub-1', 'VALID', T0);
    for (let i = 0; i < 50; i++) refusals.note(HASH, 'sub-1', 'RATE_LIMITED', T0 + i * 100);
    refusals.note(HASH, 'sub-1', 'EXPIRED', T0 + 1000);
    refusals.note(HASH, 'sub-1', 'RATE_LIMITED', T0 + 60_000);
    await refusals.flush();
    const data = published.flat().map((e) => e.data as { code: string; minute: string });
    expect(data.map((d) => [d.code, d.minute])).to.deep.equal([
      ['RATE_LIMITED', '2026-11-26T04:41:00.000Z'],
      ['EXPIRED', '2026-11-26T04:41:00.000Z'],
      ['RATE_LIMITED', '2026-11-26T04:42:00.000Z'],
    ]);
  });

  it('keeps what Kafka refused and sends it with the next flush', async () => {
    let fail = true;
    const published: Event[] = [];
    const refusals = new RefusalEvents(
      {
        publishOrdered: async (events) => {
          if (fail) throw new Error('kafka down');
          published.push(...events);
          return [];
        },
      },
      createLogger('silent'),
    );
    refusals.note(HASH, 'sub-1', 'DISABLED', T0);
    await refusals.flush();
    expect(published).to.deep.equal([]);
    fail = false;
    await refusals.flush();
    expect(published.map((e) => (e.data as { code: string }).code)).to.deep.equal(['DISABLED']);
  });
});
