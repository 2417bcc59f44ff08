/** Errors that tell the caller to rebuild the store (delete it with `IndexStore.remove`, index again). */

import type { ModelIdentity } from './types.ts';

export class ModelMismatchError extends Error {
  readonly file: string;
  readonly stored: ModelIdentity;
  readonly wanted: ModelIdentity;

  constructor(file: string, stored: ModelIdentity, wanted: ModelIdentity) {
    super(
      `${file} was indexed with embedding model ${stored.name} (${stored.dimensions} dimensions), ` +
        `not ${wanted.name} (${wanted.dimensions}): its vectors are not comparable; rebuild the index`,
    );
    this.name = 'ModelMismatchError';
    this.file = file;
    this.stored = stored;
    this.wanted = wanted;
  }
}

export class SchemaMismatchError extends Error {
  readonly file: string;
  readonly stored: string;
  readonly wanted: number;

  constructor(file: string, stored: string, wanted: number) {
    super(`${file} has index schema version ${stored}, this code reads version ${wanted}; rebuild the index`);
    this.name = 'SchemaMismatchError';
    this.file = file;
    this.stored = stored;
    this.wanted = wanted;
  }
}

/** Another connection (in this process or another) holds the store. */
export class StoreBusyError extends Error {
  readonly file: string;

  constructor(file: string, options?: ErrorOptions) {
    super(`${file} is open elsewhere: one process (and one IndexStore) owns a store at a time`, options);
    this.name = 'StoreBusyError';
    this.file = file;
  }
}

/** The collection's rows are gone from the shared database (another replica dropped it). */
export class CollectionGoneError extends Error {
  constructor(collection: string, schema: string) {
    super(`collection ${collection} is not in PostgreSQL schema ${schema} (dropped?)`);
    this.name = 'CollectionGoneError';
  }
}
