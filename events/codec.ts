import { createRequire } from 'node:module';
import avro from 'avsc';
import { parseSchema } from './avro-types.ts';
import type { EventCatalog, SchemaVersion } from './catalog.ts';
import type { Event, EventMetadata } from './envelope.ts';
import { PoisonMessageError, TransientError } from './errors.ts';
import { type SchemaRegistryClient, subjectOf } from './schema-registry.ts';

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
  /** Reads the record that starts at `start` (the registry prefix's length) and fills the rest of `buf`. */
  read(buf: Buffer, type: string, start?: number): Event;
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
    read(buf, type, start = 0) {
      tap.buf = buf;
      tap.pos = start;
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

/** A writer schema met by its registry id: how records written with it are read into the reader's version. */
interface IdWriter {
  id: number;
  /** The event-type header it was met with, as bytes: a record's header is compared, not decoded. */
  typeBytes: Buffer;
  type: string;
  /** Set when the writer is the reader's own version and a compiled reader exists. */
  compiled: CompiledReader | undefined;
  /** Otherwise the resolver from the writer's schema to the reader's. */
  resolver: Resolver | undefined;
  /** Set when records with this id can never be read as this type: the reason they are dead-lettered. */
  unreadable: string | undefined;
}

/** Registry wire format: magic byte 0, a 4-byte big-endian schema id, then the Avro body. */
const MAGIC = 0;
const PREFIX_BYTES = 5;

/** A producer meets a version nobody registered: it refuses to write bytes no reader can look up. */
export class SchemaNotRegisteredError extends TransientError {
  constructor(message: string) {
    super(message);
    this.name = 'SchemaNotRegisteredError';
  }
}

/** A record names a schema id this codec has not fetched yet: `prepare` it first. */
export class UnpreparedSchemaError extends TransientError {
  constructor(id: number) {
    super(`schema id ${id} was not fetched before decoding (prepare the batch first)`);
    this.name = 'UnpreparedSchemaError';
  }
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
  /**
   * Pre-registry records only (raw Avro, no id prefix): read, never written. Kept until every
   * environment has moved its topics once with `svc topics repartition`, which rewrites such records
   * in the registry format (docs/architecture.md, "Schema registry").
   */
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

/**
 * Events to Kafka records and back. Writes the registry wire format (magic byte, schema id, Avro)
 * with the id of the current version, looked up once in `warm`; reads that format with the
 * writer's schema fetched by id (once, in `prepare`) and resolved to the reader's version, and
 * still reads pre-registry records (raw Avro with a fingerprint header) by the catalog's files.
 */
export class EventCodec {
  private readonly resolvers = new Map<string, Resolver>();
  private readonly readers = new Map<string, CompiledReader | undefined>();
  private readonly known: KnownWriter[] = [];
  private lastKnown: KnownWriter | undefined;
  private readonly catalog: EventCatalog;
  private readonly registry: SchemaRegistryClient | undefined;
  /** Registry id of each catalog version found registered, by fingerprint. */
  private readonly ids = new Map<string, number>();
  /** Writers met by id, each under the type it was met with (almost always one). */
  private readonly byId = new Map<number, IdWriter[]>();
  private lastById: IdWriter | undefined;
  /** Id prefixes written per type: the 5 bytes, computed once. */
  private readonly prefixes = new Map<string, Buffer>();

  /** Without a registry it only reads pre-registry records and writes nothing. */
  constructor(catalog: EventCatalog, registry?: SchemaRegistryClient) {
    this.catalog = catalog;
    this.registry = registry;
  }

  /**
   * Looks up the id of every catalog version (registered at deploy time by `svc schemas register`),
   * so that writing and reading this process's own versions needs no registry call. Throws
   * RegistryUnavailableError when the registry cannot be reached.
   */
  async warm(): Promise<void> {
    const registry = this.requireRegistry();
    const lookups: (() => Promise<void>)[] = [];
    for (const type of this.catalog.types()) {
      const topic = this.catalog.topicOf(type);
      for (const version of this.catalog.versions(type)) {
        lookups.push(async () => {
          const id = await registry.idOf(subjectOf(topic, version), version);
          if (id === undefined) return;
          this.ids.set(version.fingerprint, id);
          this.remember(id, type, version);
        });
      }
    }
    // A few at a time: a catalog has tens of versions, and start-up should not queue them one by one.
    for (let i = 0; i < lookups.length; i += 8) await Promise.all(lookups.slice(i, i + 8).map((f) => f()));
  }

  /** The registry id a version was found registered with in `warm`. */
  idOf(version: Pick<SchemaVersion, 'fingerprint'>): number | undefined {
    return this.ids.get(version.fingerprint);
  }

  /**
   * Fetches (once per id, then cached for the life of the process) the writer schemas a batch
   * names that this codec has not met. No registry call when every id is known, which after
   * warm-up is every record but those of newer producers. Throws RegistryUnavailableError when
   * one is needed and the registry cannot be reached: the caller waits, nothing is dead-lettered.
   */
  async prepare(messages: readonly RawMessage[]): Promise<void> {
    let missing: Map<number, string> | undefined;
    for (const message of messages) {
      const value = message.value;
      if (!value || value.length < PREFIX_BYTES || value[0] !== MAGIC || firstHeader(message, HEADER.fingerprint) !== undefined) continue;
      const id = value.readUInt32BE(1);
      if (this.lastById?.id === id || this.byId.has(id)) continue;
      const type = header(message, HEADER.type);
      if (type !== undefined) (missing ??= new Map()).set(id, type);
    }
    if (!missing) return;
    const registry = this.requireRegistry();
    for (const [id, type] of missing) {
      const text = await registry.schemaById(id);
      if (this.byId.has(id)) continue;
      this.rememberFetched(id, type, text);
    }
  }

  private rememberFetched(id: number, type: string, text: string | undefined): void {
    const entry: IdWriter = {
      id,
      typeBytes: Buffer.from(type, 'utf8'),
      type,
      compiled: undefined,
      resolver: undefined,
      unreadable: undefined,
    };
    if (text === undefined) {
      entry.unreadable = `schema id ${id} is not in the registry`;
    } else if (!this.catalog.has(type)) {
      entry.unreadable = `unknown event type "${type}"`;
    } else {
      const reader = this.catalog.current(type);
      try {
        const writer = parseSchema(JSON.parse(text) as avro.Schema);
        const same = writer.fingerprint('sha256').toString('hex') === reader.fingerprint;
        if (same) entry.compiled = this.compiled(reader);
        else entry.resolver = reader.avroType.createResolver(writer);
      } catch (err) {
        entry.unreadable = `schema id ${id} cannot be read as "${type}" v${reader.version}: ${(err as Error).message}`;
      }
    }
    this.byId.set(id, [...(this.byId.get(id) ?? []), entry]);
  }

  /** A catalog version met by id (from `warm`): read with the compiled reader, or resolved from an older version. */
  private remember(id: number, type: string, version: SchemaVersion): void {
    const reader = this.catalog.current(type);
    const entry: IdWriter = {
      id,
      typeBytes: Buffer.from(type, 'utf8'),
      type,
      compiled: undefined,
      resolver: undefined,
      unreadable: undefined,
    };
    if (version.fingerprint === reader.fingerprint) entry.compiled = this.compiled(reader);
    else {
      try {
        entry.resolver = this.resolver(version.avroType, reader.avroType, version.fingerprint);
      } catch (err) {
        entry.unreadable = (err as Error).message;
      }
    }
    this.byId.set(id, [...(this.byId.get(id) ?? []).filter((e) => e.type !== type), entry]);
  }

  private requireRegistry(): SchemaRegistryClient {
    if (!this.registry) throw new Error('this codec has no schema registry');
    return this.registry;
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
    const prefix = this.prefixOf(writer);
    const body = writer.avroType.toBuffer(record);
    return {
      topic: definition.topic,
      key: definition.key(event.data),
      value: Buffer.concat([prefix, body], PREFIX_BYTES + body.length),
      headers: {
        [HEADER.type]: event.type,
        [HEADER.eventId]: event.metadata.eventId,
        [HEADER.correlationId]: event.metadata.correlationId,
        [HEADER.contentType]: 'application/avro',
      },
    };
  }

  private prefixOf(writer: SchemaVersion): Buffer {
    let prefix = this.prefixes.get(writer.fingerprint);
    if (!prefix) {
      const id = this.ids.get(writer.fingerprint);
      if (id === undefined) {
        throw new SchemaNotRegisteredError(
          `"${writer.eventType}" v${writer.version} is not registered in the schema registry: run \`svc schemas register\` (the deploy step) before publishing`,
        );
      }
      prefix = Buffer.alloc(PREFIX_BYTES);
      prefix.writeUInt8(MAGIC, 0);
      prefix.writeUInt32BE(id, 1);
      this.prefixes.set(writer.fingerprint, prefix);
    }
    return prefix;
  }

  /**
   * A pre-registry record (raw Avro named by a fingerprint header) in the registry wire format: the
   * same Avro bytes, unchanged, after magic byte 0 and the registry id of the very version that wrote
   * them, and its headers without the fingerprint. Undefined for a record that has no fingerprint
   * header (already in the registry format, or not an event). Throws PoisonMessageError when the
   * header names a type or version this catalog does not hold, or one `warm` did not find registered:
   * nothing is guessed, so a rewritten record reads exactly as the original did.
   */
  toRegistryFormat(message: RawMessage): { value: Buffer; headers: Record<string, Buffer | string> } | undefined {
    const fingerprintRaw = firstHeader(message, HEADER.fingerprint);
    if (fingerprintRaw === undefined) return undefined;
    const fingerprint = typeof fingerprintRaw === 'string' ? fingerprintRaw : fingerprintRaw.toString('utf8');
    const type = header(message, HEADER.type);
    const version = this.catalog.byFingerprint(fingerprint);
    if (!type || !version || version.eventType !== type) {
      throw new PoisonMessageError(
        `no catalog version of "${type ?? '(no event-type header)'}" has the fingerprint ${fingerprint.slice(0, 16)}…`,
      );
    }
    const id = this.ids.get(fingerprint);
    if (id === undefined) {
      throw new SchemaNotRegisteredError(
        `"${type}" v${version.version} is not registered in the schema registry: run \`svc schemas register\` first`,
      );
    }
    const body = valueBytes(message);
    const value = Buffer.allocUnsafe(PREFIX_BYTES + body.length);
    value.writeUInt8(MAGIC, 0);
    value.writeUInt32BE(id, 1);
    body.copy(value, PREFIX_BYTES);
    const headers: Record<string, Buffer | string> = {};
    for (const [name, raw] of Object.entries(message.headers ?? {})) {
      const first = Array.isArray(raw) ? raw[0] : raw;
      if (first !== undefined && name !== HEADER.fingerprint) headers[name] = first;
    }
    return { value, headers };
  }

  /**
   * Throws PoisonMessageError for anything that can never decode: unknown type or schema id, bad
   * bytes, a writer schema the reader's version cannot resolve. A registry-format record whose id
   * was not `prepare`d throws UnpreparedSchemaError instead (transient).
   */
  decode(message: RawMessage): Event {
    const value = valueBytes(message);
    if (value[0] === MAGIC && value.length >= PREFIX_BYTES && firstHeader(message, HEADER.fingerprint) === undefined) {
      return this.decodeRegistered(message, value);
    }
    return this.decodeLegacy(message, value);
  }

  private decodeRegistered(message: RawMessage, value: Buffer): Event {
    const id = value.readUInt32BE(1);
    const writer = this.idWriterOf(message, id);
    if (writer.unreadable) throw new PoisonMessageError(writer.unreadable);
    try {
      // The hot path: the reader's own version, read in place after the prefix (no view allocated).
      if (writer.compiled) return writer.compiled.read(value, writer.type, PREFIX_BYTES);
      const body = value.subarray(PREFIX_BYTES);
      const reader = this.catalog.current(writer.type);
      const record = (writer.resolver ? reader.avroType.fromBuffer(body, writer.resolver) : reader.avroType.fromBuffer(body)) as Record<
        string,
        unknown
      >;
      return split(writer.type, reader, record);
    } catch (err) {
      throw new PoisonMessageError(`cannot decode "${writer.type}" written with schema id ${id}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  /** Hot path: the last id met first, then the id's entries, matched to the event-type header by bytes. */
  private idWriterOf(message: RawMessage, id: number): IdWriter {
    const typeRaw = firstHeader(message, HEADER.type);
    if (typeRaw === undefined) throw new PoisonMessageError('message has no event-type header');
    const typeBytes = typeof typeRaw === 'string' ? Buffer.from(typeRaw, 'utf8') : typeRaw;
    const last = this.lastById;
    if (last?.id === id && sameBytes(last.typeBytes, typeBytes)) return last;
    const entries = this.byId.get(id);
    if (!entries) throw new UnpreparedSchemaError(id);
    for (const e of entries) if (sameBytes(e.typeBytes, typeBytes)) return (this.lastById = e);
    throw new PoisonMessageError(
      `schema id ${id} was met as "${entries[0]!.type}", but the record says it is "${typeBytes.toString('utf8')}"`,
    );
  }

  /** Pre-registry records: raw Avro named by a fingerprint header. */
  private decodeLegacy(message: RawMessage, value: Buffer): Event {
    const known = this.writerOf(message);
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
    return split(type, reader, record);
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
      if (last && sameBytes(last.fingerprintBytes, fingerprintRaw) && sameBytes(last.typeBytes, typeRaw)) return last;
      for (const k of this.known) {
        if (sameBytes(k.fingerprintBytes, fingerprintRaw) && sameBytes(k.typeBytes, typeRaw)) return (this.lastKnown = k);
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

/** A decoded record as an event: split by the reader's own field list, no generic scans. */
function split(type: string, reader: SchemaVersion, record: Record<string, unknown>): Event {
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

export function header(message: Pick<RawMessage, 'headers'>, name: string): string | undefined {
  const first = firstHeader(message, name);
  if (first === undefined) return undefined;
  return typeof first === 'string' ? first : first.toString('utf8');
}

function valueBytes(message: RawMessage): Buffer {
  if (!message.value) throw new PoisonMessageError('message has no value');
  return message.value;
}

/**
 * Buffer.equals for the short header values met per record (an event type is tens of bytes): a loop
 * in JavaScript instead of a call into C++, which cost more than the compare (consume bench, issue 37).
 */
export function sameBytes(a: Buffer, b: Buffer): boolean {
  const n = a.length;
  if (n !== b.length) return false;
  if (n > 64) return a.equals(b);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

function firstHeader(message: Pick<RawMessage, 'headers'>, name: string): Buffer | string | undefined {
  const raw = message.headers?.[name];
  return Array.isArray(raw) ? raw[0] : raw;
}
