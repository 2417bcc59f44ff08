import { expect } from 'chai';
import { EventCatalog } from '../../../events/catalog.ts';
import { EventCodec, HEADER, SchemaNotRegisteredError, compileReader, sameBytes } from '../../../events/codec.ts';
import { EVENT_DEFINITIONS } from '../../../app/registry.ts';
import { newEvent } from '../../../events/envelope.ts';
import { PoisonMessageError } from '../../../events/errors.ts';
import { legacyRecord } from '../../support/legacy-records.ts';
import { probeCatalog, probeCatalogV1, recorded } from '../../support/probe.ts';

const topic = 'unit.probe';

/**
 * Without a registry: the pre-registry records still on the topics, and what the codec refuses. The
 * registry wire format is covered against the real registry (test/integration/events/schema-registry.int.spec.ts).
 */
describe('event codec (unit)', () => {
  const catalog = probeCatalog(topic);
  const codec = new EventCodec(catalog);

  it('reads a pre-registry record (raw Avro with a fingerprint header) with its envelope', () => {
    const event = newEvent('probe.recorded', { probeId: 'p-1', seq: 7, note: 'hello', weight: 3 }, { correlationId: 'corr-1' });
    const message = legacyRecord(catalog, event);
    const decoded = codec.decode({ value: message.value, headers: message.headers });
    expect(decoded).to.deep.equal(event);
    expect(decoded.metadata.occurredAt).to.be.instanceOf(Date);
  });

  it('refuses to write an event whose schema version was not registered: no unregistered bytes', () => {
    expect(() => codec.encode(recorded('p', 1))).to.throw(SchemaNotRegisteredError, /not registered.*svc schemas register/);
  });

  it('inherits correlation and sets causation from the causing event', () => {
    const cause = newEvent('probe.recorded', { probeId: 'p', seq: 1, note: '' }, { correlationId: 'root' });
    const effect = newEvent('probe.reset', { probeId: 'p' }, { causedBy: cause.metadata });
    expect(effect.metadata.correlationId).to.equal('root');
    expect(effect.metadata.causationId).to.equal(cause.metadata.eventId);
  });

  it('refuses to encode data that does not match the schema, naming the path and not the value', () => {
    const bad = newEvent('probe.recorded', { probeId: 'p', seq: 'secret-value' as unknown as number, note: 'x' });
    expect(() => codec.encode(bad))
      .to.throw(/at: seq/)
      .that.satisfies((e: Error) => !e.message.includes('secret-value'));
  });

  it('reads a pre-registry v1 event into the v2 reader, filling the new field with its default', () => {
    const v1 = legacyRecord(probeCatalogV1(topic), recorded('p-9', 1));
    const decoded = codec.decode({ value: v1.value, headers: v1.headers });
    expect(decoded.data).to.deep.equal({ probeId: 'p-9', seq: 1, note: 'tick 1', weight: 1 });
    expect(v1.headers[HEADER.fingerprint]).not.to.equal(legacyRecord(catalog, recorded('p-9', 1)).headers[HEADER.fingerprint]);
  });

  const poison: [string, () => { value: Buffer; headers: Record<string, string> }][] = [
    ['no headers', () => ({ value: Buffer.from('x'), headers: {} })],
    ['an unknown event type', () => ({ value: Buffer.from('x'), headers: { [HEADER.type]: 'nope.happened', [HEADER.fingerprint]: 'ab' } })],
    [
      'an unknown fingerprint',
      () => ({ value: Buffer.from('x'), headers: { [HEADER.type]: 'probe.recorded', [HEADER.fingerprint]: 'ab'.repeat(32) } }),
    ],
    [
      'bytes that are not the schema',
      () => {
        const m = legacyRecord(catalog, recorded('p', 1));
        return { value: Buffer.from([0xff, 0xff, 0xff]), headers: m.headers };
      },
    ],
    [
      'a fingerprint of another event type',
      () => {
        const reset = legacyRecord(catalog, newEvent('probe.reset', { probeId: 'p' }));
        return { value: reset.value, headers: { ...reset.headers, [HEADER.type]: 'probe.recorded' } };
      },
    ],
  ];
  for (const [what, make] of poison) {
    it(`treats ${what} as poison`, () => {
      expect(() => codec.decode(make())).to.throw(PoisonMessageError);
    });
  }
});

describe('event catalog (unit)', () => {
  it('keeps every older schema version readable by the current one', () => {
    // Generic over every catalog in the code base: the platform's and the probe's.
    const catalogs = [new EventCatalog(EVENT_DEFINITIONS), probeCatalog('unit.probe')];
    let checked = 0;
    for (const catalog of catalogs) {
      const codec = new EventCodec(catalog);
      for (const type of catalog.types()) {
        const current = catalog.current(type);
        for (const old of catalog.versions(type).slice(0, -1)) {
          for (let i = 0; i < 20; i++) {
            const value = old.avroType.random() as unknown as Record<string, unknown>;
            value.occurredAt = new Date(1_700_000_000_000 + i);
            const decoded = codec.decode({
              value: old.avroType.toBuffer(value),
              headers: { [HEADER.type]: type, [HEADER.fingerprint]: old.fingerprint },
            });
            expect(decoded.type).to.equal(type);
            expect(current.version).to.be.greaterThan(old.version);
            checked++;
          }
        }
      }
    }
    expect(checked).to.be.greaterThan(0);
  });

  it('starts every record with the envelope fields', () => {
    const catalog = new EventCatalog(EVENT_DEFINITIONS);
    for (const type of catalog.types()) {
      for (const v of catalog.versions(type)) {
        const names = (v.avroType as unknown as { fields: { name: string }[] }).fields.map((f) => f.name).slice(0, 4);
        expect(names, `${type} v${v.version}`).to.deep.equal(['eventId', 'occurredAt', 'correlationId', 'causationId']);
      }
    }
  });

  it('lists topics and the types on each', () => {
    const catalog = probeCatalog('t.one');
    expect(catalog.topics()).to.deep.equal(['t.one']);
    expect(catalog.typesOnTopic('t.one')).to.have.members(['probe.recorded', 'probe.reset']);
    expect(catalog.current('probe.recorded').version).to.equal(2);
  });
});

describe('event codec: compiled readers and header matching (unit)', () => {
  const catalog = probeCatalog('unit.compiled');
  const codec = new EventCodec(catalog);
  /** What kafkajs hands a consumer: headers as Buffers, distinct objects per message. */
  const asFetched = (m: { value: Buffer; headers: Record<string, string> }) => ({
    value: Buffer.from(m.value),
    headers: Object.fromEntries(Object.entries(m.headers).map(([k, v]) => [k, Buffer.from(v)])),
    offset: '41',
  });

  it('decodes with the compiled reader exactly what the generic path decodes', () => {
    const version = catalog.current('probe.recorded');
    const compiled = compileReader(version);
    expect(compiled, 'a compiled reader for the current schema').not.to.equal(undefined);
    for (const event of [
      newEvent('probe.recorded', { probeId: 'p-1', seq: 7, note: 'hé ✓', weight: 3 }, { correlationId: 'corr-1' }),
      newEvent('probe.recorded', { probeId: '', seq: -1, note: '', weight: 0 }, { causedBy: { eventId: 'e-0', correlationId: 'c-0' } }),
    ]) {
      const value = legacyRecord(catalog, event).value;
      const generic = version.avroType.fromBuffer(value) as Record<string, unknown>;
      const read = compiled!.read(value, 'probe.recorded');
      expect(read).to.deep.equal(event);
      expect(Object.getPrototypeOf(read.data)).to.equal(Object.prototype);
      for (const name of version.dataFields) expect((read.data as Record<string, unknown>)[name]).to.deep.equal(generic[name]);
    }
  });

  it('decodes the event from Buffer headers met again and again', () => {
    const event = newEvent('probe.recorded', { probeId: 'p-2', seq: 8, note: 'n', weight: 1 });
    const m = legacyRecord(catalog, event);
    for (let i = 0; i < 3; i++) expect(codec.decode(asFetched(m))).to.deep.equal(event);
    const reset = legacyRecord(catalog, newEvent('probe.reset', { probeId: 'p-2' }));
    expect(codec.decode(asFetched(reset)).type).to.equal('probe.reset');
  });

  it('refuses truncated and trailing bytes as poison, like fromBuffer', () => {
    const m = legacyRecord(catalog, recorded('p', 1));
    const truncated = { ...asFetched(m), value: m.value.subarray(0, m.value.length - 1) };
    const trailing = { ...asFetched(m), value: Buffer.concat([m.value, Buffer.from([0])]) };
    expect(() => codec.decode(truncated)).to.throw(PoisonMessageError, /truncated|cannot decode/);
    expect(() => codec.decode(trailing)).to.throw(PoisonMessageError, /trailing data/);
  });

  it('compares header bytes as Buffer.equals does, short and long', () => {
    const b = (s: string) => Buffer.from(s, 'utf8');
    for (const [x, y] of [
      ['probe.recorded', 'probe.recorded'],
      ['probe.recorded', 'probe.recordee'],
      ['probe.recorded', 'probe.recorde'],
      ['', ''],
      ['', 'a'],
      ['é', 'e\u0301'],
      ['x'.repeat(64), 'x'.repeat(64)],
      ['x'.repeat(65), 'x'.repeat(65)],
      [`${'x'.repeat(64)}a`, `${'x'.repeat(64)}b`],
      [`a${'x'.repeat(70)}`, `b${'x'.repeat(70)}`],
    ] as const) {
      expect(sameBytes(b(x), b(y)), `${x.length} / ${y.length} bytes`).to.equal(b(x).equals(b(y)));
    }
    // The last byte counts too.
    expect(sameBytes(Buffer.from([1, 2, 3]), Buffer.from([1, 2, 4]))).to.equal(false);
  });

  it('does not take a known fingerprint under another type header', () => {
    const m = legacyRecord(catalog, recorded('p', 1));
    codec.decode(asFetched(m)); // now known
    const lying = asFetched({ value: m.value, headers: { ...m.headers, [HEADER.type]: 'probe.reset' } });
    expect(() => codec.decode(lying)).to.throw(PoisonMessageError);
  });
});
