import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';

export type ProjectPathProblem = 'not-absolute' | 'not-found' | 'not-a-directory' | 'outside-roots';

/**
 * The folder a collection indexes, resolved after every symlink (`..` tricks and links that point
 * out are seen for what they are), if it lies inside one of the roots (themselves resolved). The
 * service reads files there on a customer's behalf: nothing outside the roots, ever.
 */
export async function resolveProjectPath(given: string, roots: readonly string[]): Promise<{ path: string } | { problem: ProjectPathProblem }> {
  if (!isAbsolute(given)) return { problem: 'not-absolute' };
  let real: string;
  try {
    real = await realpath(resolve(given));
  } catch {
    return { problem: 'not-found' };
  }
  if (!(await stat(real)).isDirectory()) return { problem: 'not-a-directory' };
  for (const root of roots) {
    const realRoot = await realpath(root).catch(() => undefined);
    if (realRoot !== undefined && isInside(realRoot, real)) return { path: real };
  }
  return { problem: 'outside-roots' };
}

/** True when `path` is `root` or lies below it (both already resolved). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

export const PROJECT_PATH_MESSAGES: Record<ProjectPathProblem, string> = {
  'not-absolute': 'projectPath must be an absolute path',
  'not-found': 'projectPath does not exist',
  'not-a-directory': 'projectPath is not a directory',
  'outside-roots': 'projectPath is outside the folders this service may read (RAG_ROOTS)',
};
