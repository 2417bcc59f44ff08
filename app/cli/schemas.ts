import { loadPolicy, modeOf, historyProblems, schemaHistories } from '../../events/schema-compatibility.ts';
import { SchemaRefusedError, SchemaRegistryClient } from '../../events/schema-registry.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { eventCatalog } from '../runtime.ts';
import { EXIT, UsageError } from './exit.ts';

export const SCHEMAS_USAGE = `svc schemas register   the deploy step: register every event schema version under its subject, with its mode
svc schemas check      check every schema history under schemas/ against its mode, without a registry`;

/**
 * `svc schemas register` runs at deploy time, before the new pods start: producers look their
 * schema's id up and refuse to publish a version that is not registered. `svc schemas check` is
 * the same rule npm test applies (test/unit/events/schema-compatibility.unit.spec.ts).
 */
export async function schemasCommand(args: readonly string[]): Promise<number> {
  const [action, ...extra] = args;
  if (extra.length > 0 || (action !== 'register' && action !== 'check')) throw new UsageError(`usage:\n${SCHEMAS_USAGE}`);
  if (action === 'check') return check();
  const config = loadConfig();
  const catalog = eventCatalog(config.kafka.topicPrefix);
  const policy = loadPolicy(catalog.schemasDir);
  const registry = new SchemaRegistryClient(config.schemaRegistry);
  try {
    const registered = await registry.register(catalog, policy);
    for (const r of registered) process.stdout.write(`${r.subject} v${r.version} -> id ${r.id} (${r.mode})\n`);
    process.stdout.write(`${registered.length} schema versions registered in ${new Set(registered.map((r) => r.subject)).size} subjects\n`);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof SchemaRefusedError) {
      process.stderr.write(`svc: ${err.message}\n`);
      return EXIT.failure;
    }
    throw err;
  }
}

function check(): number {
  const policy = loadPolicy();
  let bad = 0;
  for (const [schema, files] of schemaHistories()) {
    const { mode } = modeOf(policy, schema);
    for (const problem of historyProblems(files, mode)) {
      process.stdout.write(`${schema} (${mode}): ${problem}\n`);
      bad++;
    }
  }
  process.stdout.write(bad === 0 ? 'every schema history keeps its mode\n' : `${bad} problem(s)\n`);
  return bad === 0 ? EXIT.ok : EXIT.failure;
}
