/**
 * The house limits `npm test` keeps (issue 41): the README's length, the `as unknown as` casts under
 * services/ and events/ against a ceiling kept in test/unit/repo/house-limits.json, and the README's
 * relative links. Pure functions over text, so the spec can run them on fixtures over each limit as
 * well as on the repository.
 */

export interface HouseCeilings {
  /** README.md's lines at most */
  readonly readmeLines: number;
  /** `as unknown as` occurrences at most, in the TypeScript under `castRoots` */
  readonly unknownCasts: number;
  readonly castRoots: readonly string[];
}

export interface SourceFile {
  /** relative to the repository, with forward slashes */
  readonly path: string;
  readonly text: string;
}

/** Lines as `wc -l` counts them, plus a last line without its newline. */
export function lineCount(text: string): number {
  if (text === '') return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}

/** `as unknown as` however it is spaced or wrapped, one per occurrence (two on a line count two). */
const UNKNOWN_CAST = /\bas\s+unknown\s+as\b/g;

/** The 1-based line of every `as unknown as` in a file. */
export function unknownCastLines(text: string): number[] {
  return [...text.matchAll(UNKNOWN_CAST)].map((m) => lineCount(text.slice(0, m.index + 1)));
}

export function readmeViolation(readme: string, ceilings: HouseCeilings): string | undefined {
  const lines = lineCount(readme);
  if (lines <= ceilings.readmeLines) return undefined;
  return `README.md has ${lines} lines, more than ${ceilings.readmeLines}: it is for someone who uses or runs svc; move the rest into docs/`;
}

export function castViolation(sources: readonly SourceFile[], ceilings: HouseCeilings): string | undefined {
  const places = sources.flatMap((f) => unknownCastLines(f.text).map((line) => `${f.path}:${line}`));
  if (places.length <= ceilings.unknownCasts) return undefined;
  return (
    `\`as unknown as\` appears ${places.length} times under ${ceilings.castRoots.join(', ')}, more than the ceiling of ` +
    `${ceilings.unknownCasts} (test/unit/repo/house-limits.json): type the value instead (typed row readers, the library's ` +
    `own types, a parsed shape). At: ${places.join(', ')}`
  );
}

/** A markdown link that is not a URL: its target (file part, possibly empty) and anchor. */
export interface RelativeLink {
  readonly line: number;
  readonly target: string;
  readonly file: string;
  readonly anchor: string | undefined;
}

/** Inline links and images outside fenced code blocks and code spans, absolute URLs left out. */
export function relativeLinks(markdown: string): RelativeLink[] {
  const links: RelativeLink[] = [];
  let fenced = false;
  markdown.split('\n').forEach((raw, i) => {
    if (/^\s*(```|~~~)/.test(raw)) {
      fenced = !fenced;
      return;
    }
    if (fenced) return;
    const line = raw.replace(/`[^`]*`/g, '``');
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1] ?? '';
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const hash = target.indexOf('#');
      links.push({
        line: i + 1,
        target,
        file: hash === -1 ? target : target.slice(0, hash),
        anchor: hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1)),
      });
    }
  });
  return links;
}

/** The anchors GitHub gives a markdown file's headings (lower case, punctuation dropped, spaces to hyphens, -1, -2 for repeats). */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? undefined : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/**
 * Links of `from` (a markdown file's repository path) whose file does not exist, or whose anchor
 * is not a heading of the markdown file it names. `read` answers a repository path's text, or
 * undefined when there is no such file (a folder answers '' and has no anchors to check).
 */
export function brokenLinks(from: string, markdown: string, read: (path: string) => string | undefined): string[] {
  const folder = from.includes('/') ? from.slice(0, from.lastIndexOf('/') + 1) : '';
  const broken: string[] = [];
  for (const link of relativeLinks(markdown)) {
    const path = link.file === '' ? from : normalise(folder + decodeURIComponent(link.file));
    const text = path === undefined ? undefined : read(path);
    if (path === undefined || text === undefined) {
      broken.push(`${from}:${link.line}: ${link.target} (no such file)`);
    } else if (link.anchor !== undefined && path.endsWith('.md') && !headingAnchors(text).has(link.anchor)) {
      broken.push(`${from}:${link.line}: ${link.target} (no such heading in ${path})`);
    }
  }
  return broken;
}

/** `a/./b/../c` to `a/c`; undefined when it climbs out of the repository. */
function normalise(path: string): string | undefined {
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else parts.push(part);
  }
  return parts.join('/');
}
