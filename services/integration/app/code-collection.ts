import { ragError, type Caller } from '../../premium/caller.ts';
import type { RagDeps } from '../../rag/app/deps.ts';
import { indexedCollection } from '../../rag/app/indexed-collection.ts';
import { collectionsOf, type RagCollection } from '../../rag/collections.projection.ts';

/**
 * How much an operation needs the component's code, which decides what happens when the request
 * names no collection:
 * - `required`: nothing can be done without code (validate without url, unit and integration tests);
 * - `wanted`: the page can answer, but a sentence only the code decides was asked (validate with url
 *   and a "throws" or "takes a … parameter" sentence);
 * - `optional`: the page answers everything asked; code is extra evidence when it is unambiguous.
 */
export type CodeNeed = 'required' | 'wanted' | 'optional';

/** The collection whose code the operation reads, or none and why (said to the caller). */
export type CodeSource = { collection: RagCollection } | { collection: null; why: string };

const SET_UP = 'set one up over your project (POST /api/rag/setup or the rag_setup tool) and index it';

/**
 * The caller's collection for an operation. A named one is used as named (404 when it is not the
 * caller's, 409 before its first index). Unnamed: the caller's only collection; with none, a page-only
 * operation goes on without code and one that needs code is refused (409 NO_COLLECTION); with several,
 * one that wants code is refused with the caller's collection names (409 COLLECTION_AMBIGUOUS), and a
 * page-only one goes on without code. Only the caller's own collections are ever read or named, so a
 * refusal says nothing about what other customers have.
 */
export async function codeCollection(
  deps: Pick<RagDeps, 'db' | 'config'>,
  caller: Caller,
  collectionName: string | undefined,
  need: CodeNeed,
  /** What the caller could do instead when code is required and there is none ("or pass url …"). */
  withoutCode: string,
): Promise<CodeSource> {
  if (collectionName !== undefined) return { collection: await indexedCollection(deps, caller, collectionName) };
  const own = await collectionsOf(deps.db, caller.customerId);
  const names = own.map((c) => c.collectionName).sort();
  const only = own.length === 1 ? own[0] : undefined;
  if (only) {
    if (need === 'optional' && only.indexVersion === 0)
      return { collection: null, why: `your collection ${only.collectionName} is not indexed yet (POST /api/rag/index or rag_index)` };
    return { collection: await indexedCollection(deps, caller, only.collectionName) };
  }
  if (own.length === 0) {
    if (need === 'required')
      throw ragError(409, 'NO_COLLECTION', `you have no collection of code: ${SET_UP}, ${withoutCode}`, { collections: [] });
    return { collection: null, why: `you have no collection of code: ${SET_UP}` };
  }
  const listed = `you have ${own.length} collections (${names.join(', ')})`;
  if (need === 'optional') return { collection: null, why: `${listed}: name one in collectionName for code evidence` };
  throw ragError(409, 'COLLECTION_AMBIGUOUS', `${listed}: name the one that holds the component's code in collectionName`, {
    collections: names,
  });
}

/** The collection an operation cannot do without: codeCollection's `required`, typed as such. */
export async function requiredCollection(
  deps: Pick<RagDeps, 'db' | 'config'>,
  caller: Caller,
  collectionName: string | undefined,
  withoutCode: string,
): Promise<RagCollection> {
  const source = await codeCollection(deps, caller, collectionName, 'required', withoutCode);
  if (!source.collection) throw new Error(`a required collection came back as none: ${source.why}`);
  return source.collection;
}
