import { readFileSync } from 'node:fs';
import type { EventCatalog, EventDefinition, SchemaVersion } from './catalog.ts';
import { HEADER } from './codec.ts';
import { loadPolicy, modeOf } from './schema-compatibility.ts';
import { subjectOf } from './schema-registry.ts';
import { DLQ_HEADER } from './consumer.ts';
import { TRACE_HEADER } from './trace-headers.ts';
import { dlqTopic } from './topics.ts';

/**
 * The AsyncAPI 3 document of the backbone's topics, derived from the catalog (topics, types, keys)
 * and the `.avsc` files it loaded (every version, byte for byte as released). Nothing here is a
 * second hand-written copy: `npm run asyncapi` writes docs/asyncapi.yaml from it, and a test fails
 * when the committed file differs from what the catalog and schemas give now.
 */

export const AVRO_SCHEMA_FORMAT = 'application/vnd.apache.avro+json;version=1.9.0';
const KAFKA_BINDING_VERSION = '0.5.0';
/** The channel parameter every address starts with: KAFKA_TOPIC_PREFIX. */
const PREFIX_PARAMETER = 'topicPrefix';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

export interface AsyncApiOptions {
  title: string;
  version: string;
  /** Which bounded context declares (and so publishes) an event type. */
  publisherOf: (type: string) => string;
}

/**
 * The data fields an event's key is read from, in the order it falls back through them: the key
 * function is run on data whose fields are markers, then again with each field it used set to null,
 * until it yields nothing. Refuses a key that is not one data field or a `??` chain of them, so the
 * document never describes a key it did not observe.
 */
export function keyFields(definition: EventDefinition, dataFields: readonly string[]): string[] {
  const marker = (field: string) => `\u0000${field}\u0000`;
  const chain: string[] = [];
  for (;;) {
    const data = Object.fromEntries(dataFields.map((f) => [f, chain.includes(f) ? null : marker(f)]));
    const key: unknown = definition.key(data);
    if (key === null || key === undefined) break;
    const field = dataFields.find((f) => key === marker(f));
    if (field === undefined || chain.includes(field))
      throw new Error(`the key of "${definition.type}" is not a data field or a ?? chain of them (got ${JSON.stringify(key)})`);
    chain.push(field);
  }
  if (chain.length === 0) throw new Error(`the key of "${definition.type}" reads no data field`);
  return chain;
}

const messageId = (type: string, version: number) => `${type}.v${version}`;
const dlqMessageId = (topic: string) => `${topic}.dead-letter`;
/** Component and operation ids may hold only letters, digits, ".", "_" and "-". */
const safeId = (text: string) => text.replace(/[^A-Za-z0-9._-]/g, '_');

function keySchema(fields: readonly string[]): JsonObject {
  const [first, ...fallbacks] = fields;
  const description =
    fallbacks.length === 0
      ? `the event's ${first}: one aggregate's events stay ordered in one partition`
      : `the event's ${first}, else ${fallbacks.join(', else ')}: one aggregate's events stay ordered in one partition`;
  return { type: 'string', description, 'x-key-fields': [...fields] };
}

function eventHeaders(type: string, version: SchemaVersion): JsonObject {
  return {
    type: 'object',
    required: [HEADER.type, HEADER.eventId, HEADER.correlationId, HEADER.contentType],
    properties: {
      [HEADER.type]: { type: 'string', const: type },
      [HEADER.fingerprint]: {
        type: 'string',
        const: version.fingerprint,
        description:
          'Records written before the schema registry only (raw Avro, no id prefix): the SHA-256 fingerprint of their writer schema. Never written now; still read.',
      },
      [HEADER.eventId]: { type: 'string', format: 'uuid', description: 'the envelope eventId' },
      [HEADER.correlationId]: { type: 'string', description: 'the envelope correlationId' },
      [HEADER.contentType]: { type: 'string', const: 'application/avro' },
      ...traceHeaders('the producer span'),
    },
  };
}

/** W3C Trace Context, written only while traces are on (README.md, Traces); readers must not require it. */
function traceHeaders(whose: string): JsonObject {
  return {
    [TRACE_HEADER.parent]: {
      type: 'string',
      pattern: '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$',
      description: `W3C traceparent of ${whose}, when traces are on; consumers continue the trace from it`,
    },
    [TRACE_HEADER.state]: { type: 'string', description: 'W3C tracestate, beside traceparent when the trace has one' },
  };
}

function deadLetterHeaders(): JsonObject {
  const required = [DLQ_HEADER.error, DLQ_HEADER.topic, DLQ_HEADER.partition, DLQ_HEADER.offset, DLQ_HEADER.group, DLQ_HEADER.failedAt];
  return {
    type: 'object',
    description: "The original record's headers, kept, plus these.",
    required,
    properties: {
      [DLQ_HEADER.error]: { type: 'string', maxLength: 2000, description: 'why the consumer group gave the record up' },
      [DLQ_HEADER.topic]: { type: 'string', description: 'the topic the record was read from' },
      [DLQ_HEADER.partition]: { type: 'string', pattern: '^[0-9]+$' },
      [DLQ_HEADER.offset]: { type: 'string', pattern: '^[0-9]+$' },
      [DLQ_HEADER.group]: { type: 'string', description: 'the consumer group that dead-lettered it' },
      [DLQ_HEADER.failedAt]: { type: 'string', format: 'date-time' },
      [DLQ_HEADER.redriveGroup]: {
        type: 'string',
        description: 'set on a copy `svc dlq redrive` wrote back to the source topic: only this group handles it',
      },
      ...traceHeaders("the span that dead-lettered it (replacing the original's)"),
    },
  };
}

export function asyncApiDocument(catalog: EventCatalog, options: AsyncApiOptions): JsonObject {
  if (catalog.topicPrefix !== '') throw new Error('the document is written from an unprefixed catalog; the prefix is a channel parameter');
  const policy = loadPolicy(catalog.schemasDir);
  const channels: JsonObject = {};
  const operations: JsonObject = {};
  const messages: JsonObject = {};
  const schemas: JsonObject = {};
  const parameters: JsonObject = {
    [PREFIX_PARAMETER]: {
      description:
        'KAFKA_TOPIC_PREFIX, prepended to every topic and consumer group so several environments (or test runs) share one cluster; empty by default',
      default: '',
    },
  };

  for (const topic of catalog.topics()) {
    const types = catalog.typesOnTopic(topic).sort();
    const refs: JsonObject = {};
    for (const type of types) {
      const definition = catalog.definition(type);
      const current = catalog.current(type);
      for (const version of catalog.versions(type)) {
        const id = messageId(type, version.version);
        const schemaId = safeId(id);
        schemas[schemaId] = { schemaFormat: AVRO_SCHEMA_FORMAT, schema: JSON.parse(readFileSync(version.file, 'utf8')) as Json };
        messages[safeId(id)] = {
          name: type,
          title: `${type} v${version.version}`,
          summary:
            version === current
              ? `${type}, written at v${version.version} (the newest: what publishers write and readers resolve to)`
              : `${type}, v${version.version}: still in the log, resolved to v${current.version} on read`,
          contentType: 'application/avro',
          description: `Registry wire format: magic byte 0, the 4-byte big-endian schema id this version was registered with under subject \`{${PREFIX_PARAMETER}}${subjectOf(topic, version)}\` (topic-record name strategy), then the Avro body.`,
          headers: eventHeaders(type, version),
          payload: { $ref: `#/components/schemas/${schemaId}` },
          bindings: {
            kafka: {
              key: keySchema(keyFields(definition, version.dataFields)),
              schemaIdLocation: 'payload',
              schemaIdPayloadEncoding: 'confluent',
              schemaLookupStrategy: 'TopicRecordNameStrategy',
              bindingVersion: KAFKA_BINDING_VERSION,
            },
          },
          'x-registry-subject': `{${PREFIX_PARAMETER}}${subjectOf(topic, version)}`,
          'x-compatibility': modeOf(policy, definition.schema).mode,
          'x-event-type': type,
          'x-schema-version': version.version,
          'x-schema-file': `schemas/${definition.schema}.v${version.version}.avsc`,
        };
        refs[safeId(id)] = { $ref: `#/components/messages/${safeId(id)}` };
      }
    }
    const channelId = safeId(topic);
    channels[channelId] = {
      address: `{${PREFIX_PARAMETER}}${topic}`,
      title: topic,
      description: `The system of record for ${types.join(', ')}; kept forever. Dead letters of its consumer groups go to ${dlqTopic(topic)}.`,
      parameters: { [PREFIX_PARAMETER]: { $ref: `#/components/parameters/${PREFIX_PARAMETER}` } },
      messages: refs,
      bindings: {
        kafka: { topic, topicConfiguration: { 'retention.ms': -1, 'retention.bytes': -1 }, bindingVersion: KAFKA_BINDING_VERSION },
      },
    };
    const publishers = [...new Set(types.map((t) => options.publisherOf(t)))].sort();
    operations[safeId(`publish.${topic}`)] = {
      action: 'send',
      channel: { $ref: `#/channels/${channelId}` },
      summary: `${publishers.join(', ')} publish${publishers.length === 1 ? 'es' : ''} to ${topic}`,
      description: 'Idempotent producer, acks from every in-sync replica; the key keeps one aggregate in one partition.',
      messages: Object.keys(refs).map((id) => ({ $ref: `#/channels/${channelId}/messages/${id}` })),
    };

    const dlq = dlqTopic(topic);
    const dlqChannelId = safeId(dlq);
    const dlqId = safeId(dlqMessageId(topic));
    messages[dlqId] = {
      name: `${topic}.dead-letter`,
      title: `dead letter of ${topic}`,
      summary: `A record of ${topic} a consumer group gave up on: undecodable, or failing after its retries`,
      description: `The original key and value, byte for byte: one of ${Object.keys(refs).join(', ')}, or bytes that never decoded.`,
      contentType: 'application/octet-stream',
      headers: deadLetterHeaders(),
      payload: { type: 'string', format: 'binary' },
      bindings: { kafka: { key: { type: 'string', description: `the original record's key` }, bindingVersion: KAFKA_BINDING_VERSION } },
    };
    channels[dlqChannelId] = {
      address: `{${PREFIX_PARAMETER}}${dlq}`,
      title: dlq,
      description: `Dead letters of ${topic}; listed, shown and re-driven with \`svc dlq\`.`,
      parameters: { [PREFIX_PARAMETER]: { $ref: `#/components/parameters/${PREFIX_PARAMETER}` } },
      messages: { [dlqId]: { $ref: `#/components/messages/${dlqId}` } },
      bindings: {
        kafka: { topic: dlq, topicConfiguration: { 'retention.ms': -1, 'retention.bytes': -1 }, bindingVersion: KAFKA_BINDING_VERSION },
      },
    };
    operations[safeId(`dead-letter.${topic}`)] = {
      action: 'send',
      channel: { $ref: `#/channels/${dlqChannelId}` },
      summary: `A consumer group of ${topic} dead-letters a record`,
      messages: [{ $ref: `#/channels/${dlqChannelId}/messages/${dlqId}` }],
    };
    operations[safeId(`redrive.${topic}`)] = {
      action: 'receive',
      channel: { $ref: `#/channels/${dlqChannelId}` },
      summary: `\`svc dlq list|show|redrive ${topic}\` reads the dead letters`,
      messages: [{ $ref: `#/channels/${dlqChannelId}/messages/${dlqId}` }],
    };
  }

  return {
    asyncapi: '3.1.0',
    info: {
      title: options.title,
      version: options.version,
      description: [
        'The event backbone: every topic, its event types and schema versions (Avro, as released), its message key, and its dead-letter twin.',
        'Generated by `npm run asyncapi` from events/catalog.ts and schemas/**/*.avsc; do not edit by hand.',
        'Every address starts with KAFKA_TOPIC_PREFIX (the topicPrefix parameter). Each record starts with the envelope fields eventId, occurredAt, correlationId, causationId.',
      ].join('\n\n'),
    },
    defaultContentType: 'application/avro',
    servers: {
      kafka: {
        host: '{brokers}',
        protocol: 'kafka',
        description: 'The cluster KAFKA_BROKERS names (TLS and SASL as configured: docs/operations.md)',
        variables: { brokers: { description: 'KAFKA_BROKERS, the first broker', default: '127.0.0.1:9092' } },
      },
    },
    channels,
    operations,
    components: { schemas, messages, parameters },
  };
}
