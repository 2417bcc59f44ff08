/**
 * Where an evaluation set's corpus is on this machine. `corpus.source` says which registry the
 * package comes from:
 *
 * - `npm` (the default): an installed package; `root` is relative to the repository (the current
 *   folder), and node_modules must hold the version the set was written for.
 * - `go`: a Go module, fetched with `go mod download -json <module>@<version>` into the module cache
 *   (GOMODCACHE, outside the clone, so a second run is fast); `root` is relative to the module's folder.
 * - `maven`: a Maven Central artifact's `-sources.jar` (`group:artifact`), checked against its
 *   `.sha1` and unzipped into `~/.cache/svc/rag-eval/<artifact>-<version>-sources/`; `root` is
 *   relative to that folder.
 *
 * Every failure names the set it was resolving for.
 */

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { promisify } from 'node:util';

export type CorpusSource = 'npm' | 'go' | 'maven';

const SOURCES: readonly CorpusSource[] = ['npm', 'go', 'maven'];

/** A set's `corpus`, as written in its JSON file (`source` absent means npm). */
export interface CorpusSpec {
  readonly source?: CorpusSource;
  readonly package: string;
  readonly version: string;
  readonly root: string;
}

/** A validated corpus, its source made explicit. */
export interface Corpus {
  readonly source: CorpusSource;
  readonly package: string;
  readonly version: string;
  readonly root: string;
}

const MAVEN_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
const MAVEN_VERSION = /^[A-Za-z0-9_][A-Za-z0-9_.+-]*$/;

/** Validates a set's `corpus` (`set`: the set's file, for the messages). */
export function parseCorpus(value: unknown, set: string): Corpus {
  if (typeof value !== 'object' || value === null) throw new Error(`${set}: corpus is missing or not an object`);
  const spec = value as Record<string, unknown>;
  const text = (key: string): string => {
    const field = spec[key];
    if (typeof field !== 'string' || field.trim() === '') throw new Error(`${set}: corpus.${key} must be a non-empty string`);
    return field;
  };
  const sourceField = spec.source ?? 'npm';
  const source = SOURCES.find((s) => s === sourceField);
  if (!source) throw new Error(`${set}: corpus.source must be one of ${SOURCES.join(', ')} (is ${JSON.stringify(sourceField)})`);
  const corpus: Corpus = { source, package: text('package'), version: text('version'), root: text('root') };
  if (isAbsolute(corpus.root) || corpus.root.split(/[\\/]/).includes('..')) {
    throw new Error(`${set}: corpus.root must be a relative path inside the package (is ${corpus.root})`);
  }
  if (source === 'go') {
    // execFile passes no shell, but a leading '-' would still be read by go as a flag
    if (/[\s@]/.test(corpus.package) || corpus.package.startsWith('-'))
      throw new Error(`${set}: ${corpus.package} is not a Go module path`);
    if (!/^v\d+\.\d+\.\d+\S*$/.test(corpus.version)) throw new Error(`${set}: ${corpus.version} is not a Go module version (v1.2.3)`);
  }
  if (source === 'maven') mavenArtifact(corpus, set);
  return corpus;
}

export interface MavenArtifact {
  readonly group: string;
  readonly artifact: string;
  readonly version: string;
  /** the `-sources.jar` on Maven Central */
  readonly jarUrl: string;
  /** its SHA-1, as Maven Central publishes it beside the jar */
  readonly sha1Url: string;
}

export const MAVEN_CENTRAL = 'https://repo1.maven.org/maven2';

/** `group:artifact` and a version, as the sources jar's address on Maven Central. */
export function mavenArtifact(corpus: Pick<Corpus, 'package' | 'version'>, set: string): MavenArtifact {
  const [group, artifact, ...rest] = corpus.package.split(':');
  if (!group || !artifact || rest.length > 0 || !MAVEN_NAME.test(group) || !MAVEN_NAME.test(artifact)) {
    throw new Error(`${set}: ${corpus.package} is not a Maven group:artifact`);
  }
  if (!MAVEN_VERSION.test(corpus.version)) throw new Error(`${set}: ${corpus.version} is not a Maven version`);
  const jarUrl = `${MAVEN_CENTRAL}/${group.replaceAll('.', '/')}/${artifact}/${corpus.version}/${artifact}-${corpus.version}-sources.jar`;
  return { group, artifact, version: corpus.version, jarUrl, sha1Url: `${jarUrl}.sha1` };
}

/** The folder a Maven sources jar is unzipped into. */
export function mavenCacheDir(artifact: Pick<MavenArtifact, 'artifact' | 'version'>, home: string = homedir()): string {
  return join(home, '.cache', 'svc', 'rag-eval', `${artifact.artifact}-${artifact.version}-sources`);
}

/** The SHA-1 in a `.sha1` file's text (the first word: some also name the file after it), lower case. */
export function parseSha1(text: string): string | undefined {
  const word = text.trim().split(/\s+/)[0]?.toLowerCase() ?? '';
  return /^[0-9a-f]{40}$/.test(word) ? word : undefined;
}

export interface CorpusOptions {
  /** the repository (an npm corpus's root and node_modules are relative to it; default: the current folder) */
  readonly cwd?: string;
  /** the home folder (the Maven cache is under it; default: the user's) */
  readonly home?: string;
}

/** The local folder of a set's corpus (`set`: the set's file, for the messages), fetched if need be. */
export async function corpusDirectory(spec: unknown, set: string, options: CorpusOptions = {}): Promise<string> {
  const corpus = parseCorpus(spec, set);
  const cwd = options.cwd ?? process.cwd();
  let base: string;
  if (corpus.source === 'npm') {
    const manifest = join(cwd, 'node_modules', corpus.package, 'package.json');
    if (!existsSync(manifest)) throw new Error(`${set}: ${corpus.package} is not installed (no ${manifest})`);
    const installed = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
    if (installed.version !== corpus.version) {
      throw new Error(`${set}: the set was written for ${corpus.package} ${corpus.version}, node_modules has ${installed.version}`);
    }
    base = cwd;
  } else if (corpus.source === 'go') {
    base = await goModuleDir(corpus, set);
  } else {
    base = await mavenSourcesDir(mavenArtifact(corpus, set), set, options.home ?? homedir());
  }
  const dir = join(base, corpus.root);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new Error(`${set}: corpus root ${corpus.root} is not a folder of ${corpus.package} ${corpus.version} (looked in ${base})`);
  }
  return dir;
}

const run = promisify(execFile);

/** What `go mod download -json` prints for one module (the fields used). */
interface GoDownload {
  readonly Dir?: string;
  readonly Error?: string;
}

function goDownloadOf(stdout: string): GoDownload | undefined {
  try {
    const parsed: unknown = JSON.parse(stdout);
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { Dir, Error: error } = parsed as Record<string, unknown>;
    return { ...(typeof Dir === 'string' ? { Dir } : {}), ...(typeof error === 'string' ? { Error: error } : {}) };
  } catch {
    return undefined;
  }
}

async function goModuleDir(corpus: Corpus, set: string): Promise<string> {
  const module = `${corpus.package}@${corpus.version}`;
  let stdout: string;
  try {
    // from the temporary folder, so no go.mod around it takes part; -mod=mod in case GOFLAGS says vendor
    ({ stdout } = await run('go', ['mod', 'download', '-json', module], {
      cwd: tmpdir(),
      env: { ...process.env, GOFLAGS: '-mod=mod' },
      maxBuffer: 1024 * 1024,
    }));
  } catch (error) {
    const failure = error as NodeJS.ErrnoException & { stdout?: string; stderr?: string };
    if (failure.code === 'ENOENT') throw new Error(`${set}: go mod download ${module}: the go command is not installed (not on PATH)`);
    const reason = goDownloadOf(failure.stdout ?? '')?.Error || failure.stderr?.trim() || failure.message;
    throw new Error(`${set}: go mod download ${module} failed: ${reason}`);
  }
  const download = goDownloadOf(stdout);
  if (download?.Error) throw new Error(`${set}: go mod download ${module} failed: ${download.Error}`);
  if (!download?.Dir) throw new Error(`${set}: go mod download ${module} printed no module folder (Dir)`);
  return download.Dir;
}

async function download(url: string, set: string): Promise<Buffer> {
  let response: Response;
  try {
    response = await fetch(url);
  } catch (error) {
    const { message, cause } = error as Error;
    throw new Error(`${set}: downloading ${url} failed: ${message}${cause instanceof Error ? ` (${cause.message})` : ''}`);
  }
  if (!response.ok) throw new Error(`${set}: downloading ${url} failed: HTTP ${response.status}`);
  return Buffer.from(await response.arrayBuffer());
}

/**
 * The unzipped sources jar, from the cache when present. It is downloaded and unzipped into a
 * temporary folder beside the cache folder and renamed into place only when complete, so a run
 * killed half-way leaves no half-extracted cache behind.
 */
async function mavenSourcesDir(artifact: MavenArtifact, set: string, home: string): Promise<string> {
  const dir = mavenCacheDir(artifact, home);
  if (existsSync(dir)) return dir;
  const jar = await download(artifact.jarUrl, set);
  const expected = parseSha1((await download(artifact.sha1Url, set)).toString('utf8'));
  if (!expected) throw new Error(`${set}: ${artifact.sha1Url} holds no SHA-1`);
  const actual = createHash('sha1').update(jar).digest('hex');
  if (actual !== expected)
    throw new Error(`${set}: checksum mismatch for ${artifact.jarUrl}: SHA-1 ${actual}, ${artifact.sha1Url} says ${expected}`);
  mkdirSync(dirname(dir), { recursive: true });
  const temporary = mkdtempSync(`${dir}.partial-`);
  try {
    const jarFile = join(temporary, 'sources.jar');
    writeFileSync(jarFile, jar);
    const unzipped = join(temporary, 'sources');
    try {
      await run('unzip', ['-q', jarFile, '-d', unzipped], { maxBuffer: 16 * 1024 * 1024 });
    } catch (error) {
      const failure = error as NodeJS.ErrnoException & { stderr?: string };
      const reason =
        failure.code === 'ENOENT' ? 'the unzip command is not installed (not on PATH)' : failure.stderr?.trim() || failure.message;
      throw new Error(`${set}: unzipping ${artifact.jarUrl} failed: ${reason}`);
    }
    try {
      renameSync(unzipped, dir);
    } catch (error) {
      // another run put it there first: theirs is as good
      if (!existsSync(dir)) throw new Error(`${set}: moving the unzipped sources to ${dir} failed: ${(error as Error).message}`);
    }
  } finally {
    rmSync(temporary, { recursive: true, force: true });
  }
  return dir;
}

/**
 * Copies a corpus folder to `to` with every file and folder writable by its owner: the Go module
 * cache is read-only, and the bench changes one file of its copy and deletes the copy afterwards.
 */
export function copyCorpus(from: string, to: string): void {
  cpSync(from, to, { recursive: true });
  const makeWritable = (path: string): void => {
    const stats = lstatSync(path); // a symbolic link is left alone, and not followed out of the copy
    if (stats.isSymbolicLink()) return;
    chmodSync(path, (stats.mode & 0o7777) | (stats.isDirectory() ? 0o700 : 0o600));
    if (stats.isDirectory()) for (const name of readdirSync(path)) makeWritable(join(path, name));
  };
  makeWritable(to);
}
