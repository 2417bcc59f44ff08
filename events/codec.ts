import type avro from 'avsc';
import type { EventCatalog } from './catalog.ts';
import type { Event, EventMetadata } from './envelope.ts';
import { PoisonMessageError } from './errors.ts';

type Resolver = ReturnType<avro.Type['createResolver']>;

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
    const type = header(message, HEADER.type);
    const fingerprint = header(message, HEADER.fingerprint);
    if (!type || !fingerprint) throw new PoisonMessageError('message has no event-type or schema-fingerprint header');
    if (!this.catalog.has(type)) throw new PoisonMessageError(`unknown event type "${type}"`);
    const writer = this.catalog.byFingerprint(fingerprint);
    if (!writer || writer.eventType !== type) {
      throw new PoisonMessageError(`unknown schema fingerprint ${fingerprint.slice(0, 16)}… for "${type}"`);
    }
    if (!message.value) throw new PoisonMessageError('message has no value');
    const reader = this.catalog.current(type);
    let record: Record<string, unknown>;
    try {
      record =
        writer.fingerprint === reader.fingerprint
          ? (reader.avroType.fromBuffer(message.value) as Record<string, unknown>)
          : (reader.avroType.fromBuffer(message.value, this.resolver(writer.avroType, reader.avroType, fingerprint)) as Record<string, unknown>);
    } catch (err) {
      throw new PoisonMessageError(`cannot decode "${type}" written with v${writer.version}: ${(err as Error).message}`, { cause: err });
    }
    // Hot path (every consumed message): split by the reader's own field list, no generic scans.
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

  private resolver(writer: avro.Type, reader: avro.Type, fingerprint: string): Resolver {
    let resolver = this.resolvers.get(fingerprint);
    if (!resolver) {
      try {
        resolver = reader.createResolver(writer);
      } catch (err) {
        throw new PoisonMessageError(`schema ${fingerprint.slice(0, 16)}… cannot be read as the current version: ${(err as Error).message}`, { cause: err });
      }
      this.resolvers.set(fingerprint, resolver);
    }
    return resolver;
  }
}

export function header(message: Pick<RawMessage, 'headers'>, name: string): string | undefined {
  const raw = message.headers?.[name];
  const first = Array.isArray(raw) ? raw[0] : raw;
  if (first === undefined) return undefined;
  return typeof first === 'string' ? first : first.toString('utf8');
}
