import { createRequire } from 'node:module';
import avro from 'avsc';
import type { EventCatalog, SchemaVersion } from './catalog.ts';
import type { Event, EventMetadata } from './envelope.ts';
import { PoisonMessageError } from './errors.ts';

type Resolver = ReturnType<avro.Type['createResolver']>;

/** avsc's byte reader. Not re-exported by avsc 5.7 (pinned), hence the internal path; without it decoding takes the generic path. */
interface Tap {
  pos: number;
  buf: Buffer;
}
type TapConstructor = new (buf: Buffer, pos?: number) => Tap;
const Tap: TapConstructor | undefined = (() => {
  try {
    const found = (createRequire(import.meta.url)('avsc/lib/utils.js') as { Tap?: unknown }).Tap;
    return typeof found === 'function' ? (found as TapConstructor) : undefined;
  } catch {
    return undefined;
  }
})();

/** A reader compiled for one schema version. */
export interface CompiledReader {
  read(buf: Buffer, type: string): Event;
}

/**
 * Readers compiled for one schema version read as itself (the common case: writer = reader). They
 * read the envelope fields into the metadata and the rest straight into a plain `data` object with
 * avsc's own per-field readers, building the final event in one step: no intermediate record, no
 * copy, no per-message reader state. Same bytes accepted and refused as `fromBuffer` (truncated or
 * trailing bytes fail). Undefined when avsc's internals are not as expected (the generic path then).
 */
export function compileReader(version: Pick<SchemaVersion, 'avroType' | 'dataFields'>): CompiledReader | undefined {
  const record = version.avroType;
  if (!Tap || !(record instanceof avro.types.RecordType)) return undefined;
  const fields = record.fields;
  if (fields.length !== version.dataFields.length + 4 || !fields.every((f) => hasReader(f.type))) return undefined;
  const data = version.dataFields.map((name, i) => `${JSON.stringify(name)}: t${i + 4}._read(tap)`).join(', ');
  const envelope = 'const eventId = t0._read(tap), occurredAt = t1._read(tap), correlationId = t2._read(tap), causationId = t3._read(tap);';
  const metadata = 'metadata: { eventId, occurredAt, correlationId, causationId: causationId ?? null }';
  const names = fields.map((_, i) => `t${i}`);
  const types = fields.map((f) => f.type);
  // The same code generation avsc itself uses for its record readers (RecordType._createReader);
  // object literals evaluate their properties in source order, so the fields are read in schema order.
  const readEvent = new Function(
    ...names,
    `return function read(tap, type) {\n  ${envelope}\n  return { type, data: { ${data} }, ${metadata} };\n};`,
  )(...types) as (tap: Tap, type: string) => Event;
  // One tap per reader, re-pointed at each message: reading is synchronous, so it is never shared.
  const tap = new Tap(Buffer.alloc(0));
  return {
    read(buf, type) {
      tap.buf = buf;
      tap.pos = 0;
      const event = readEvent(tap, type);
      const end = tap.pos;
      tap.buf = EMPTY; // holds no fetch response between messages
      if (end > buf.length) throw new Error('truncated buffer');
      if (end < buf.length) throw new Error('trailing data');
      return event;
    },
  };
}

const EMPTY = Buffer.alloc(0);

/** avsc's per-type reader is internal (not in its types), so it is looked for, never assumed. */
function hasReader(type: avro.Type): boolean {
  return '_read' in type && typeof type._read === 'function';
}

/** One writer schema as met in headers: the raw header bytes it came with, for a compare instead of a string decode. */
interface KnownWriter {
  typeBytes: Buffer;
  fingerprintBytes: Buffer;
  type: string;
  writer: SchemaVersion;
  /** Set when the writer is the current version and a compiled reader exists. */
  compiled: CompiledReader | undefined;
}

/** Distinct (type, fingerprint) header pairs remembered per codec: more than the catalog holds in practice. */
const MAX_KNOWN_WRITERS = 256;

export const HEADER = {
  type: 'event-type',
  fingerprint: 'schema-fingerprint',
  eventId: 'event-id',
  correlationId: 'correlation-id',
  contentType: 'content-type',
} as const;

export interface EncodedMessage {
  topic: string;
  key: string;
  value: Buffer;
  headers: Record<string, string>;
}

/** What arrives from Kafka: headers may be Buffers, strings, arrays or missing. */
export interface RawMessage {
  key?: Buffer | string | null;
  value: Buffer | null;
  headers?: Record<string, Buffer | string | (Buffer | string)[] | undefined>;
}

export class EventCodec {
  private readonly resolvers = new Map<string, Resolver>();
  private readonly readers = new Map<string, CompiledReader | undefined>();
  private readonly known: KnownWriter[] = [];
  private lastKnown: KnownWriter | undefined;
  private readonly catalog: EventCatalog;

  constructor(catalog: EventCatalog) {
    this.catalog = catalog;
  }

  encode(event: Event): EncodedMessage {
    const definition = this.catalog.definition(event.type);
    const writer = this.catalog.current(event.type);
    // Event data is a record of the schema's fields; isValid below checks it against the schema.
    const record = { ...event.metadata, ...(event.data as Record<string, unknown>) };
    const badPaths: string[] = [];
    // Only paths go into the error: values may be secrets.
    if (!writer.avroType.isValid(record, { errorHook: (path) => badPaths.push(path.join('.') || '(record)') })) {
      throw new Error(`event ${event.type} does not match its schema v${writer.version} at: ${badPaths.join(', ')}`);
    }
    return {
      topic: definition.topic,
      key: definition.key(event.data),
      value: writer.avroType.toBuffer(record),
      headers: {
        [HEADER.type]: event.type,
        [HEADER.fingerprint]: writer.fingerprint,
        [HEADER.eventId]: event.metadata.eventId,
        [HEADER.correlationId]: event.metadata.correlationId,
        [HEADER.contentType]: 'application/avro',
      },
    };
  }

  /** Throws PoisonMessageError for anything that can never decode: unknown type or schema, bad bytes. */
  decode(message: RawMessage): Event {
    const known = this.writerOf(message);
    const value = valueBytes(message);
    if (known.compiled) {
      try {
        return known.compiled.read(value, known.type);
      } catch (err) {
        throw this.poison(known, err);
      }
    }
    return this.decodeGeneric(known, value);
  }

  /** Any writer version, resolved to the reader's when older. */
  private decodeGeneric(known: KnownWriter, value: Buffer): Event {
    const { type, writer } = known;
    const reader = this.catalog.current(type);
    let record: Record<string, unknown>;
    try {
      record =
        writer.fingerprint === reader.fingerprint
          ? (reader.avroType.fromBuffer(value) as Record<string, unknown>)
          : (reader.avroType.fromBuffer(value, this.resolver(writer.avroType, reader.avroType, writer.fingerprint)) as Record<
              string,
              unknown
            >);
    } catch (err) {
      throw this.poison(known, err);
    }
    // Split by the reader's own field list, no generic scans.
    const data: Record<string, unknown> = {};
    for (const name of reader.dataFields) data[name] = record[name];
    const metadata: EventMetadata = {
      eventId: record.eventId as string,
      occurredAt: record.occurredAt as Date,
      correlationId: record.correlationId as string,
      causationId: (record.causationId as string | null) ?? null,
    };
    return { type, data, metadata };
  }

  private poison(known: KnownWriter, err: unknown): PoisonMessageError {
    if (err instanceof PoisonMessageError) return err;
    return new PoisonMessageError(`cannot decode "${known.type}" written with v${known.writer.version}: ${(err as Error).message}`, {
      cause: err,
    });
  }

  /**
   * The writer schema a message names in its headers. Hot path (every consumed message): header
   * bytes seen before are matched by a byte compare, with no string decoded or hashed.
   */
  private writerOf(message: Pick<RawMessage, 'headers'>): KnownWriter {
    const typeRaw = firstHeader(message, HEADER.type);
    const fingerprintRaw = firstHeader(message, HEADER.fingerprint);
    if (Buffer.isBuffer(typeRaw) && Buffer.isBuffer(fingerprintRaw)) {
      // Neighbours in a partition are mostly of one type: the last match first.
      const last = this.lastKnown;
      if (last?.fingerprintBytes.equals(fingerprintRaw) && last.typeBytes.equals(typeRaw)) return last;
      for (const k of this.known) {
        if (k.fingerprintBytes.equals(fingerprintRaw) && k.typeBytes.equals(typeRaw)) return (this.lastKnown = k);
      }
    }
    const type = typeRaw === undefined ? undefined : typeof typeRaw === 'string' ? typeRaw : typeRaw.toString('utf8');
    const fingerprint =
      fingerprintRaw === undefined ? undefined : typeof fingerprintRaw === 'string' ? fingerprintRaw : fingerprintRaw.toString('utf8');
    if (!type || !fingerprint) throw new PoisonMessageError('message has no event-type or schema-fingerprint header');
    if (!this.catalog.has(type)) throw new PoisonMessageError(`unknown event type "${type}"`);
    const writer = this.catalog.byFingerprint(fingerprint);
    if (!writer || writer.eventType !== type) {
      throw new PoisonMessageError(`unknown schema fingerprint ${fingerprint.slice(0, 16)}… for "${type}"`);
    }
    const seen = this.known.find((k) => k.type === type && k.writer === writer);
    if (seen) return seen;
    const reader = this.catalog.current(type);
    const known: KnownWriter = {
      // Copies: a header Buffer is a view of a whole fetch response, which must not stay alive here.
      typeBytes: Buffer.from(type, 'utf8'),
      fingerprintBytes: Buffer.from(fingerprint, 'utf8'),
      type: reader.eventType,
      writer,
      compiled: writer.fingerprint === reader.fingerprint ? this.compiled(reader) : undefined,
    };
    if (this.known.length < MAX_KNOWN_WRITERS) this.known.push(known);
    return known;
  }

  private compiled(version: SchemaVersion): CompiledReader | undefined {
    if (!this.readers.has(version.fingerprint)) this.readers.set(version.fingerprint, compileReader(version));
    return this.readers.get(version.fingerprint);
  }

  private resolver(writer: avro.Type, reader: avro.Type, fingerprint: string): Resolver {
    let resolver = this.resolvers.get(fingerprint);
    if (!resolver) {
      try {
        resolver = reader.createResolver(writer);
      } catch (err) {
        throw new PoisonMessageError(
          `schema ${fingerprint.slice(0, 16)}… cannot be read as the current version: ${(err as Error).message}`,
          { cause: err },
        );
      }
      this.resolvers.set(fingerprint, resolver);
    }
    return resolver;
  }
}

export function header(message: Pick<RawMessage, 'headers'>, name: string): string | undefined {
  const first = firstHeader(message, name);
  if (first === undefined) return undefined;
  return typeof first === 'string' ? first : first.toString('utf8');
}

function valueBytes(message: RawMessage): Buffer {
  if (!message.value) throw new PoisonMessageError('message has no value');
  return message.value;
}

function firstHeader(message: Pick<RawMessage, 'headers'>, name: string): Buffer | string | undefined {
  const raw = message.headers?.[name];
  return Array.isArray(raw) ? raw[0] : raw;
}
