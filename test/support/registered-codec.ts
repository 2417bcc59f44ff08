import type { StackEnv } from '../../deploy/local/stack.ts';
import type { EventCatalog } from '../../events/catalog.ts';
import { EventCodec } from '../../events/codec.ts';
import { loadPolicy } from '../../events/schema-compatibility.ts';
import { SchemaRegistryClient } from '../../events/schema-registry.ts';

export const registryOf = (stack: Pick<StackEnv, 'SCHEMA_REGISTRY_URL'>): SchemaRegistryClient =>
  new SchemaRegistryClient({ url: stack.SCHEMA_REGISTRY_URL });

/**
 * What a deploy does for a catalog, then what a process does at start: register its schemas in
 * the stack's real registry (`svc schemas register`), then a codec that looked their ids up.
 */
export async function registeredCodec(
  catalog: EventCatalog,
  stack: Pick<StackEnv, 'SCHEMA_REGISTRY_URL'>,
  register = true,
): Promise<EventCodec> {
  const registry = registryOf(stack);
  if (register) await registry.register(catalog, loadPolicy(catalog.schemasDir));
  const codec = new EventCodec(catalog, registry);
  await codec.warm();
  return codec;
}
