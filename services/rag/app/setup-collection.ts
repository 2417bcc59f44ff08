import { newEvent } from '../../../events/envelope.ts';
import { publishAndApply } from '../../../events/own-events.ts';
import { actedBy, ragError, type Caller } from '../../premium/caller.ts';
import { collectionIdOf, collectionsOf, collectionsProjection, getCollection } from '../collections.projection.ts';
import type { CollectionConfigured } from '../events.ts';
import type { SetupInput, VectorDb } from '../input.ts';
import { foldersOf, OPERATOR_PATH_MESSAGE, PROJECT_PATH_MESSAGES, resolveProjectPath } from '../project-path.ts';
import { chosenVectorDb, servedVectorDb } from '../vector-db.ts';
import type { RagDeps } from './deps.ts';

export interface SetupResult {
  success: true;
  message: string;
  /** null: a collection of pushed files only. */
  projectPath: string | null;
  collectionName: string;
  vectorDB: VectorDb;
}

/** The caller's folder the path names, or a 400 saying why not (services/rag/project-path.ts). */
async function resolvedFolder(deps: RagDeps, caller: Caller, path: string): Promise<string> {
  const operator = caller.keyHash === null;
  const resolved = await resolveProjectPath(path, foldersOf(deps.config.rag.folders, caller.customerId, operator));
  if ('problem' in resolved) {
    throw ragError(
      400,
      'INVALID_PROJECT_PATH',
      operator && resolved.problem === 'not-yours' ? OPERATOR_PATH_MESSAGE : PROJECT_PATH_MESSAGES[resolved.problem],
    );
  }
  return resolved.path;
}

/**
 * POST /api/rag/setup and the `rag_setup` tool: a collection of the caller's, over a folder of the
 * caller's (services/rag/project-path.ts says whose folders are whose), or, without a projectPath, of
 * pushed files only (what a deployment without synced folders offers). Setting up an existing
 * collection again changes its folder or vector store; a new one counts against the tier's bound.
 */
export async function setupCollection(deps: RagDeps, caller: Caller, input: SetupInput, correlationId: string): Promise<SetupResult> {
  const vectorDB = chosenVectorDb(input.vectorDB, servedVectorDb(deps.config.rag.indexEngine));
  const projectPath = input.projectPath === undefined ? null : await resolvedFolder(deps, caller, input.projectPath);
  const collectionId = collectionIdOf(caller.customerId, input.collectionName);
  if (caller.tier && !(await getCollection(deps.db, collectionId))) {
    const limit = deps.config.rag.limits.collections[caller.tier];
    if ((await collectionsOf(deps.db, caller.customerId)).length >= limit) {
      throw ragError(
        403,
        'COLLECTION_LIMIT',
        `your ${caller.tier} plan has room for ${limit} collections; set one of them up again instead, or upgrade`,
        {
          limit,
          upgrade: deps.config.urls.pricing,
        },
      );
    }
  }
  const event: CollectionConfigured = newEvent(
    'rag.collection-configured',
    { collectionId, customerId: caller.customerId, collectionName: input.collectionName, projectPath, vectorDB, ...actedBy(caller) },
    { correlationId },
  );
  await publishAndApply(deps.publisher, deps.db, collectionsProjection, [event]);
  return {
    success: true,
    message: `collection ${input.collectionName} is set up; index it with POST /api/rag/index`,
    projectPath,
    collectionName: input.collectionName,
    vectorDB,
  };
}
