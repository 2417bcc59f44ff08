import { readFile, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { RagDeps } from '../../rag/app/deps.ts';
import type { RagCollection } from '../../rag/collections.projection.ts';
import { isInside } from '../../rag/project-path.ts';
import { validPushedPath } from '../../rag/app/request-index.ts';

/**
 * A file of a collection's sources as the indexer reads them: a pushed file of that path first, else
 * the project folder's (resolved after symlinks and kept inside the folder). null when neither has it.
 */
export async function readProjectFile(deps: Pick<RagDeps, 'pushed' | 'config'>, collection: RagCollection, path: string): Promise<string | null> {
  if (!validPushedPath(path)) return null;
  const pushed = await deps.pushed.get(collection.collectionId, path);
  if (pushed) return pushed.content;
  if (!collection.projectPath) return null;
  try {
    const root = await realpath(collection.projectPath);
    const file = await realpath(join(root, path));
    if (!isInside(root, file)) return null;
    const info = await stat(file);
    if (!info.isFile() || info.size > deps.config.rag.maxFileBytes) return null;
    return await readFile(file, 'utf8');
  } catch {
    return null;
  }
}
