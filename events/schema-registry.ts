import { readFileSync } from 'node:fs';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
// The same client's REST layer, for the calls its SchemaRegistry class keeps private (mode, look-up by text, schema by id).
import restApi from '@kafkajs/confluent-schema-registry/dist/api/index.js';
import type { EventCatalog, SchemaVersion } from './catalog.ts';
import { TransientError } from './errors.ts';
import { type CompatibilityPolicy, modeOf } from './schema-compatibility.ts';

/** Where the registry is and how to sign in to it (config: SCHEMA_REGISTRY_*). */
export interface RegistrySettings {
  /** The Confluent-compatible API's base, e.g. Apicurio's `http://host:8080/apis/ccompat/v7`. */
  url: string;
  auth?: { username: string; password: string };
}

/**
 * Subjects follow the topic-record name strategy, `<topic>-<record full name>`: a topic carries
 * several event types, each with a history of its own, so a subject per topic would check one
 * type's schema against another's.
 */
export function subjectOf(topic: string, version: Pick<SchemaVersion, 'avroType'>): string {
  return `${topic}-${version.avroType.name ?? ''}`;
}

const texts = new Map<string, string>();

/**
 * The text registered for a version: its file's JSON, compacted. Apicurio matches a lookup by the
 * text's hash, so the same function makes the text at registration and at every look-up.
 */
export function schemaText(version: Pick<SchemaVersion, 'file'>): string {
  let text = texts.get(version.file);
  if (text === undefined) {
    text = JSON.stringify(JSON.parse(readFileSync(version.file, 'utf8')));
    texts.set(version.file, text);
  }
  return text;
}

/** Thrown when the registry cannot be reached or answers 5xx: try again later, nothing is wrong with the record. */
export class RegistryUnavailableError extends TransientError {
  override readonly name = 'RegistryUnavailableError';
}

/** The registry refused a schema: it breaks the subject's compatibility mode. */
export class SchemaRefusedError extends Error {
  override readonly name = 'SchemaRefusedError';
}

export interface RegisteredVersion {
  subject: string;
  eventType: string;
  version: number;
  id: number;
  mode: string;
}

interface HttpError {
  status?: number;
  message?: string;
}

const statusOf = (err: unknown): number | undefined =>
  typeof err === 'object' && err !== null && typeof (err as HttpError).status === 'number' ? (err as HttpError).status : undefined;

/** A 4xx is an answer about the request; anything else (no answer, 5xx) is the registry being away. */
function unavailable(what: string, err: unknown): RegistryUnavailableError {
  return new RegistryUnavailableError(`schema registry unavailable (${what}): ${(err as Error).message ?? String(err)}`, { cause: err });
}

/**
 * svc's use of a Confluent-compatible registry, through @kafkajs/confluent-schema-registry (the
 * client: docs/architecture.md, "Schema registry" says why that one). The codec keeps its own
 * per-id cache of compiled readers; this only talks to the registry.
 */
export class SchemaRegistryClient {
  private readonly client: SchemaRegistry;
  private readonly api: ReturnType<typeof restApi.default>;

  constructor(settings: RegistrySettings) {
    const args = {
      host: settings.url,
      ...(settings.auth ? { auth: { username: settings.auth.username, password: settings.auth.password } } : {}),
      clientId: 'svc',
      // The callers retry on their own terms (a consumer waits a registry out, a deploy step fails): one quick retry here.
      retry: { retries: 1, initialRetryTimeInSecs: 0.1, maxRetryTimeInSecs: 0.5 },
    };
    this.client = new SchemaRegistry(args);
    this.api = restApi.default(args);
  }

  /**
   * Deploy time (`svc schemas register`): every version of every type, oldest first, under its
   * subject with the mode its policy names. Registering a version already there returns its id. A
   * version the registry refuses stops the step, with the subject and the registry's reason.
   */
  async register(catalog: EventCatalog, policy: CompatibilityPolicy): Promise<RegisteredVersion[]> {
    // One subject at a time: Apicurio 2.4 on H2 gives new contents registered at once the same id and fails
    // all but one (a 500), and registrations racing each other keep clashing. Two processes registering at
    // the same moment (replicas started together) are retried below with a random wait.
    const done: RegisteredVersion[] = [];
    for (const type of catalog.types()) done.push(...(await this.registerType(catalog, policy, type)));
    return done;
  }

  /** One type's versions, oldest first, so the registry checks each against those before it. */
  private async registerType(catalog: EventCatalog, policy: CompatibilityPolicy, type: string): Promise<RegisteredVersion[]> {
    const topic = catalog.topicOf(type);
    const { mode } = modeOf(policy, catalog.definition(type).schema);
    const registered: RegisteredVersion[] = [];
    // A subject that exists gets the policy's mode before anything is checked against it (a policy change takes effect at the next deploy).
    let modeSet = await this.setMode(subjectOf(topic, catalog.current(type)), mode);
    for (const version of catalog.versions(type)) {
      const subject = subjectOf(topic, version);
      let id: number | undefined;
      for (let attempt = 1; id === undefined; attempt++) {
        try {
          // Registering a version that is there already answers its id.
          const response = await this.api.Subject.register({ subject, body: { schema: schemaText(version) } });
          ({ id } = response.data() as { id: number });
        } catch (err) {
          const status = statusOf(err);
          // Apicurio answers 409 also when another registration created the subject a moment before: not a refusal.
          const raced = status === 409 && /already exists/.test((err as Error).message);
          if ((status === 409 || status === 422) && !raced) {
            throw new SchemaRefusedError(
              `${subject}: the registry refused v${version.version} (${version.file}): ${(err as Error).message}`,
              {
                cause: err,
              },
            );
          }
          // Another registration at the same moment (another pod's deploy step, a parallel test) can clash in the registry's storage: again.
          if (attempt >= 5) throw unavailable(`registering ${subject}`, err);
          await new Promise((resolve) => setTimeout(resolve, 50 * attempt + Math.random() * 200));
        }
      }
      if (!modeSet) modeSet = await this.setMode(subject, mode);
      registered.push({ subject, eventType: type, version: version.version, id, mode });
    }
    return registered;
  }

  /** False when the subject does not exist yet (some registries refuse a mode for it): set it after the first version. */
  private async setMode(subject: string, mode: string): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.api.Subject.updateConfig({ subject, body: { compatibility: mode } });
        return true;
      } catch (err) {
        if (statusOf(err) === 404) return false;
        // Two deploy steps setting the same new subject's mode at once: Apicurio answers the second 409 (the rule exists now); again.
        if (attempt >= 3) throw unavailable(`setting the mode of ${subject}`, err);
        await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
      }
    }
  }

  /** The id a version was registered with; undefined when it was not. */
  async idOf(subject: string, version: Pick<SchemaVersion, 'file'>): Promise<number | undefined> {
    try {
      const response = await this.api.Subject.registered({ subject, body: { schema: schemaText(version) } });
      const { id } = response.data() as { id: number };
      return id;
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw unavailable(`looking up ${subject}`, err);
    }
  }

  /** A writer schema's text by its id; undefined when the registry has no such id. */
  async schemaById(id: number): Promise<string | undefined> {
    try {
      const response = await this.api.Schema.find({ id });
      return (response.data() as { schema: string }).schema;
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw unavailable(`fetching schema ${id}`, err);
    }
  }

  /**
   * Any registry-format record's value decoded with its writer's schema alone (the client fetches
   * it by id and caches it): what a tool outside svc would see. Timestamps stay epoch milliseconds.
   */
  async decodeWithWriter(value: Buffer): Promise<{ schemaId: number; record: unknown }> {
    try {
      return { schemaId: value.readUInt32BE(1), record: (await this.client.decode(value)) as unknown };
    } catch (err) {
      const status = statusOf(err);
      if (status === undefined || status >= 500) throw unavailable('decoding a record', err);
      throw err;
    }
  }

  /** The mode a subject is checked with, as the registry reports it. */
  async modeOf(subject: string): Promise<string | undefined> {
    try {
      const response = await this.api.Subject.config({ subject });
      return (response.data() as { compatibilityLevel?: string }).compatibilityLevel;
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw unavailable(`reading the mode of ${subject}`, err);
    }
  }
}
