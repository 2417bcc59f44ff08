import type { Config } from '../platform/config.ts';
import { ragError } from '../premium/caller.ts';
import type { VectorDb } from './input.ts';

/** The vector store this deployment serves: the index engine it was configured with. */
export function servedVectorDb(engine: Config['rag']['indexEngine']): VectorDb {
  return engine.kind === 'postgres' ? 'pgvector' : 'local';
}

/**
 * The store a new set-up asks for, or the refusal naming what this deployment has. An index lives in
 * one engine only, so a name the deployment does not serve is never quietly mapped onto its engine.
 */
export function chosenVectorDb(requested: VectorDb | undefined, served: VectorDb): VectorDb {
  const wanted = requested ?? served;
  if (wanted !== served) {
    throw ragError(400, 'VECTOR_DB_NOT_CONFIGURED', `vectorDB "${wanted}" is not available in this deployment; it has: ${served}`, {
      available: [served],
    });
  }
  return wanted;
}

/**
 * A collection set up for another store than this deployment serves (the deployment moved engines):
 * its index is not here, so it is refused until it is set up and indexed again, not answered empty.
 */
export function checkServedHere(collection: { collectionName: string; vectorDB: string }, served: VectorDb): void {
  if (collection.vectorDB !== served) {
    throw ragError(
      409,
      'VECTOR_DB_NOT_SERVED',
      `collection ${collection.collectionName} was set up for vectorDB "${collection.vectorDB}", and this deployment has ${served}: ` +
        'set it up again (POST /api/rag/setup), then index it',
      { available: [served] },
    );
  }
}
