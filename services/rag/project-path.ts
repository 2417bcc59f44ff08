import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { isInside } from './sources/contained-read.ts';

export { isInside };

/**
 * Which folders a caller may set a collection up over. Sources belong to a customer: by default
 * (`per-customer`) a customer's folders are `<root>/<customerId>/` for each of RAG_ROOTS, where the
 * operator syncs that customer's repositories; RAG_CUSTOMER_FOLDERS adds folders per customer; the
 * `shared` layout (one trusted customer, or a team that shares everything) lets anyone use any
 * folder under the roots. Operators (the `svc rag` CLI, no key) may use the roots themselves.
 */
export interface FolderPolicy {
  readonly layout: 'per-customer' | 'shared';
  readonly roots: readonly string[];
  readonly customerFolders: ReadonlyMap<string, readonly string[]>;
}

/**
 * A customer id that can name a folder: no separators, not `.`/`..`, nothing a file system treats
 * specially. Any other id (an empty one included) has no folder under the roots and may only push.
 */
const FOLDER_NAME = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,199}$/;

export function foldersOf(policy: FolderPolicy, customerId: string, operator: boolean): string[] {
  if (operator || policy.layout === 'shared') return [...policy.roots];
  const own = FOLDER_NAME.test(customerId) ? policy.roots.map((root) => join(root, customerId)) : [];
  return [...own, ...(policy.customerFolders.get(customerId) ?? [])];
}

export type ProjectPathProblem = 'not-absolute' | 'not-yours';

/**
 * The folder a collection indexes, resolved after every symlink (`..` tricks and links that point
 * out are seen for what they are), if it lies inside one of the caller's folders (themselves
 * resolved). Whether the path does not exist, is a file, or is someone else's, the answer is the
 * same `not-yours`: a refusal must not tell a caller what exists on the server.
 */
export async function resolveProjectPath(
  given: string,
  folders: readonly string[],
): Promise<{ path: string } | { problem: ProjectPathProblem }> {
  if (!isAbsolute(given)) return { problem: 'not-absolute' };
  const real = await realpath(resolve(given)).catch(() => undefined);
  if (
    real === undefined ||
    !(await stat(real).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  )
    return { problem: 'not-yours' };
  for (const folder of folders) {
    const realFolder = await realpath(folder).catch(() => undefined);
    if (realFolder !== undefined && isInside(realFolder, real)) return { path: real };
  }
  return { problem: 'not-yours' };
}

/**
 * The collection's folder as stored at setup (a real path), still the same folder now: it was not
 * replaced by a link that points elsewhere since. Undefined when it was.
 */
export async function stillTheFolder(projectPath: string): Promise<string | undefined> {
  const real = await realpath(projectPath).catch(() => undefined);
  return real === projectPath ? real : undefined;
}

export const PROJECT_PATH_MESSAGES: Record<ProjectPathProblem, string> = {
  'not-absolute': 'projectPath must be an absolute path',
  'not-yours':
    'projectPath is not a folder of yours: set up a folder under your own folder of RAG_ROOTS (<root>/<customerId>/...), or push the files instead',
};

/** An operator may use any folder under the roots: its refusal says so. */
export const OPERATOR_PATH_MESSAGE = 'projectPath is not a folder inside the folders this service may read (RAG_ROOTS), or does not exist';
