import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type { RagDeps } from '../../rag/app/deps.ts';
import type { RagCollection } from '../../rag/collections.projection.ts';
import { stillTheFolder } from '../../rag/project-path.ts';
import { validPushedPath } from '../../rag/app/request-index.ts';
import { readContained } from '../../rag/sources/contained-read.ts';

/**
 * A file of a collection's sources as the indexer reads them: a pushed file of that path first, else
 * the project folder's, read inside the folder at the moment of reading (the folder still the one
 * set up, the file opened without following a last link and checked where it really is). null when
 * neither has it.
 */
export async function readProjectFile(
  deps: Pick<RagDeps, 'pushed' | 'config'>,
  collection: RagCollection,
  path: string,
): Promise<string | null> {
  if (!validPushedPath(path)) return null;
  const pushed = await deps.pushed.get(collection.collectionId, path);
  if (pushed) return pushed.content;
  if (!collection.projectPath) return null;
  const root = await stillTheFolder(collection.projectPath);
  if (!root) return null;
  const real = await realpath(join(root, path)).catch(() => undefined);
  if (real === undefined) return null;
  const read = await readContained(root, real, deps.config.rag.maxFileBytes);
  return 'bytes' in read ? read.bytes.toString('utf8') : null;
}
