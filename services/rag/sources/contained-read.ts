import { constants } from 'node:fs';
import { open, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import { isAbsolute, relative, sep } from 'node:path';

/**
 * Reading a file of a customer's folder so that it stays inside that folder at the moment of
 * reading. Checking a path and then reading it leaves a gap: a file listed as regular can be
 * swapped for a symlink (or a directory above it for one) before the read. So the file is opened
 * first, without following a link at its last step, and the real path of what was opened (the
 * kernel's word for the descriptor) must lie inside the folder; only then is it read.
 */
export type ContainedRead = { bytes: Buffer } | { refused: 'outside-root' | 'too-large' | 'unreadable' };

const FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

export async function readContained(realRoot: string, path: string, maxBytes: number): Promise<ContainedRead> {
  let handle: FileHandle;
  try {
    handle = await open(path, FLAGS);
  } catch (err) {
    // ELOOP: the last step is a symlink now, though it was not when listed.
    return { refused: (err as NodeJS.ErrnoException).code === 'ELOOP' ? 'outside-root' : 'unreadable' };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { refused: 'unreadable' };
    const opened = await openedPath(handle, path);
    if (opened === undefined || !isInside(realRoot, opened)) return { refused: 'outside-root' };
    if (info.size > maxBytes) return { refused: 'too-large' };
    // Read one byte past the limit: a file that grew since stat is seen for what it is.
    const buffer = Buffer.alloc(Math.min(maxBytes + 1, Math.max(info.size + 1, 1)));
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length === buffer.length) break;
    }
    if (length > maxBytes) return { refused: 'too-large' };
    return { bytes: buffer.subarray(0, length) };
  } catch {
    return { refused: 'unreadable' };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** The real path of an open file: /proc's link on Linux; elsewhere the path resolved now, if it is the same file. */
async function openedPath(handle: FileHandle, path: string): Promise<string | undefined> {
  try {
    return await readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    try {
      const real = await realpath(path);
      const [a, b] = [await handle.stat(), await stat(real)];
      return a.ino === b.ino && a.dev === b.dev ? real : undefined;
    } catch {
      return undefined;
    }
  }
}

/** True when `path` is `root` or lies below it (both already resolved). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}
