import { readFileSync, readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type avro from 'avsc';
import { parseSchema } from './avro-types.ts';
import { ENVELOPE_FIELDS, type Event } from './envelope.ts';
import { UnknownEventTypeError } from './errors.ts';

export const DEFAULT_SCHEMAS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'schemas');

/** One event type: where it lives, how it is written, and which aggregate orders it. */
export interface EventDefinition {
  type: string;
  topic: string;
  /** `<aggregate>/<event>`: the files `schemas/<aggregate>/<event>.v<N>.avsc`. */
  schema: string;
  /** Message key = aggregate id, so one aggregate's events stay ordered in one partition. */
  key: (data: unknown) => string;
}

/**
 * Declares an event type with the data it carries, so its key function is written against that
 * data. The catalog keeps definitions of every type in one list, so the key is stored taking
 * `unknown`: sound, because the codec calls it only with the data of an event of this very type.
 */
export function defineEvent<E extends Event>(definition: {
  type: E['type'];
  topic: string;
  schema: string;
  key: (data: E['data']) => string;
}): EventDefinition {
  return { type: definition.type, topic: definition.topic, schema: definition.schema, key: (data) => definition.key(data as E['data']) };
}

type AnyDefinition = EventDefinition;

export interface SchemaVersion {
  eventType: string;
  version: number;
  avroType: avro.Type;
  fingerprint: string;
  /** The record's fields after the envelope: an event's `data`. */
  dataFields: readonly string[];
  /** The `.avsc` file it was read from. */
  file: string;
}

interface Entry {
  definition: AnyDefinition;
  versions: SchemaVersion[];
  reader: SchemaVersion;
}

export class EventCatalog {
  readonly schemasDir: string;
  /** Prepended to every topic: several environments (or test files) can share one cluster. */
  readonly topicPrefix: string;
  private readonly entries = new Map<string, Entry>();
  private readonly fingerprints = new Map<string, SchemaVersion>();

  constructor(definitions: readonly AnyDefinition[], schemasDir: string = DEFAULT_SCHEMAS_DIR, options: { topicPrefix?: string } = {}) {
    this.schemasDir = schemasDir;
    this.topicPrefix = options.topicPrefix ?? '';
    for (const given of definitions) {
      const definition = { ...given, topic: this.topicPrefix + given.topic };
      if (this.entries.has(definition.type)) throw new Error(`event type "${definition.type}" is defined twice`);
      const versions = this.loadVersions(definition);
      const reader = versions[versions.length - 1];
      if (!reader) throw new Error(`event type "${definition.type}" has no schema file`);
      this.entries.set(definition.type, { definition, versions, reader });
      for (const v of versions) {
        const clash = this.fingerprints.get(v.fingerprint);
        if (clash) throw new Error(`schemas of "${clash.eventType}" v${clash.version} and "${v.eventType}" v${v.version} are identical`);
        this.fingerprints.set(v.fingerprint, v);
      }
    }
  }

  definition(type: string): AnyDefinition {
    return this.entry(type).definition;
  }

  has(type: string): boolean {
    return this.entries.has(type);
  }

  /** The newest version: events are written with it and read into it. */
  current(type: string): SchemaVersion {
    return this.entry(type).reader;
  }

  versions(type: string): readonly SchemaVersion[] {
    return this.entry(type).versions;
  }

  byFingerprint(fingerprint: string): SchemaVersion | undefined {
    return this.fingerprints.get(fingerprint);
  }

  types(): string[] {
    return [...this.entries.keys()];
  }

  topics(): string[] {
    return [...new Set([...this.entries.values()].map((e) => e.definition.topic))].sort();
  }

  typesOnTopic(topic: string): string[] {
    return [...this.entries.values()].filter((e) => e.definition.topic === topic).map((e) => e.definition.type);
  }

  topicOf(type: string): string {
    return this.entry(type).definition.topic;
  }

  /** The distinct topics carrying these event types: what a consumer of them subscribes to. */
  topicsOf(types: readonly string[]): string[] {
    return [...new Set(types.map((t) => this.topicOf(t)))];
  }

  private entry(type: string): Entry {
    const entry = this.entries.get(type);
    if (!entry) throw new UnknownEventTypeError(type);
    return entry;
  }

  private loadVersions(definition: AnyDefinition): SchemaVersion[] {
    const slash = definition.schema.lastIndexOf('/');
    const folder = join(this.schemasDir, definition.schema.slice(0, slash));
    const base = definition.schema.slice(slash + 1);
    const pattern = new RegExp(`^${base.replace(/[.]/g, '\\.')}\\.v(\\d+)\\.avsc$`);
    const files = readdirSync(folder)
      .map((name) => ({ name, match: pattern.exec(name) }))
      .filter((f): f is { name: string; match: RegExpExecArray } => f.match !== null)
      .map((f) => ({ name: f.name, version: Number(f.match[1]) }))
      .sort((a, b) => a.version - b.version);
    return files.map(({ name, version }, index) => {
      if (version !== index + 1)
        throw new Error(`${definition.schema}: versions must run 1..N, found v${version} at position ${index + 1}`);
      const path = join(folder, name);
      const json = JSON.parse(readFileSync(path, 'utf8')) as avro.Schema;
      const avroType = parseSchema(json);
      const fields = assertEnvelope(path, avroType);
      return {
        eventType: definition.type,
        version,
        avroType,
        fingerprint: avroType.fingerprint('sha256').toString('hex'),
        dataFields: fields.slice(ENVELOPE_FIELDS.length),
        file: path,
      };
    });
  }
}

function assertEnvelope(path: string, type: avro.Type): string[] {
  const fields = (type as avro.types.RecordType).fields?.map((f) => f.name) ?? [];
  const head = fields.slice(0, ENVELOPE_FIELDS.length);
  if (head.join(',') !== ENVELOPE_FIELDS.join(',')) {
    throw new Error(`${path}: a record must start with the envelope fields ${ENVELOPE_FIELDS.join(', ')}`);
  }
  return fields;
}
