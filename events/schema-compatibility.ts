import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import avro from 'avsc';
import { parseSchema } from './avro-types.ts';
import { DEFAULT_SCHEMAS_DIR } from './catalog.ts';

/** The registry's modes svc uses (the Confluent API's names). */
export type CompatibilityMode = 'BACKWARD_TRANSITIVE' | 'FULL_TRANSITIVE';

export interface ModeChoice {
  mode: CompatibilityMode;
  /** Why this subject is checked this way: shown by `svc schemas register`, read in review. */
  reason: string;
}

/** schemas/compatibility.json: a default for every schema, and the exceptions, each with its reason. */
export interface CompatibilityPolicy {
  default: ModeChoice;
  /** Keyed by the schema's path under schemas/, `<context>/<event>` (as in defineEvent's `schema`). */
  subjects: Record<string, ModeChoice>;
}

export const POLICY_FILE = 'compatibility.json';

export function loadPolicy(schemasDir: string = DEFAULT_SCHEMAS_DIR): CompatibilityPolicy {
  return JSON.parse(readFileSync(join(schemasDir, POLICY_FILE), 'utf8')) as CompatibilityPolicy;
}

export function modeOf(policy: CompatibilityPolicy, schema: string): ModeChoice {
  return policy.subjects[schema] ?? policy.default;
}

/** Every schema history under a folder: `<context>/<event>` -> its versions' files, v1 first. */
export function schemaHistories(schemasDir: string = DEFAULT_SCHEMAS_DIR): Map<string, string[]> {
  const histories = new Map<string, { version: number; file: string }[]>();
  for (const context of readdirSync(schemasDir, { withFileTypes: true })) {
    if (!context.isDirectory()) continue;
    for (const name of readdirSync(join(schemasDir, context.name))) {
      const match = /^(.+)\.v(\d+)\.avsc$/.exec(name);
      if (!match) continue;
      const key = `${context.name}/${match[1]}`;
      histories.set(key, [...(histories.get(key) ?? []), { version: Number(match[2]), file: join(schemasDir, context.name, name) }]);
    }
  }
  return new Map([...histories].map(([key, files]) => [key, files.sort((a, b) => a.version - b.version).map((f) => f.file)]));
}

/**
 * What breaks `mode` in a history of versions (oldest first), one line per problem, naming the
 * versions and the field: empty when none. BACKWARD_TRANSITIVE: each version reads every older one
 * (projections replay from offset 0 with the newest code). FULL_TRANSITIVE: also every older
 * version reads each newer one (old pods during a rolling deploy). avsc's resolver is the judge,
 * the same one the codec reads with.
 */
export function historyProblems(files: readonly string[], mode: CompatibilityMode): string[] {
  const types = files.map((file) => parseSchema(JSON.parse(readFileSync(file, 'utf8')) as avro.Schema));
  const problems: string[] = [];
  for (let newer = 1; newer < types.length; newer++) {
    for (let older = 0; older < newer; older++) {
      for (const p of resolutionProblems(types[newer]!, types[older]!)) problems.push(`v${newer + 1} cannot read v${older + 1}: ${p}`);
      if (mode === 'FULL_TRANSITIVE') {
        for (const p of resolutionProblems(types[older]!, types[newer]!)) problems.push(`v${older + 1} cannot read v${newer + 1}: ${p}`);
      }
    }
  }
  return problems;
}

/** Why `reader` cannot read what `writer` wrote, by field; empty when it can. */
export function resolutionProblems(reader: avro.Type, writer: avro.Type, path = ''): string[] {
  try {
    reader.createResolver(writer);
    return [];
  } catch (err) {
    if (!(reader instanceof avro.types.RecordType) || !(writer instanceof avro.types.RecordType)) {
      return [`${path ? `field "${path}"` : 'the record'}: ${explainType(reader, writer) ?? (err as Error).message}`];
    }
    const problems: string[] = [];
    for (const field of reader.fields) {
      const name = path ? `${path}.${field.name}` : field.name;
      const written = writer.field(field.name) ?? field.aliases.map((a) => writer.field(a)).find((f) => f !== undefined);
      if (!written) {
        if (field.defaultValue() === undefined) problems.push(`field "${name}" is not in the writer's schema and has no default`);
        continue;
      }
      problems.push(...resolutionProblems(field.type, written.type, name));
    }
    return problems.length > 0 ? problems : [`${path ? `field "${path}"` : 'the record'}: ${(err as Error).message}`];
  }
}

function explainType(reader: avro.Type, writer: avro.Type): string | undefined {
  if (reader instanceof avro.types.EnumType && writer instanceof avro.types.EnumType) {
    const missing = writer.symbols.filter((s) => !reader.symbols.includes(s));
    if (missing.length > 0) return `enum ${reader.name ?? ''} lacks ${missing.join(', ')} and has no default to read them as`;
  }
  return undefined;
}
