import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { keepOut } from '../../deploy/local/processes.ts';
import { startStack, DEV_PORTS, type Stack } from '../../deploy/local/stack.ts';
import { SERVICES } from '../registry.ts';
import { printUrls, startServices, unlessSignalled, untilSignal } from './run.ts';

export interface StartOptions {
  dataDir: string;
  /** 'auto' picks free ports for the local servers (tests); default the development ports. */
  stackPorts?: 'dev' | 'auto';
}

/** The ports the environment names (ACCOUNTS_PORT, KEYS_PORT, ...): every *_PORT variable whose value is a port. */
export function servicePortsIn(env: NodeJS.ProcessEnv): number[] {
  return Object.entries(env)
    .filter(([name]) => name.endsWith('_PORT'))
    .map(([, value]) => Number(value))
    .filter((port) => Number.isInteger(port) && port > 0 && port < 65536);
}

async function startLocalStack(options: StartOptions): Promise<Stack> {
  const existing = {
    ...(process.env.KAFKA_BROKERS ? { KAFKA_BROKERS: process.env.KAFKA_BROKERS } : {}),
    ...(process.env.MONGODB_URI ? { MONGODB_URI: process.env.MONGODB_URI } : {}),
    ...(process.env.SMTP_URL ? { SMTP_URL: process.env.SMTP_URL, MAILPIT_URL: process.env.MAILPIT_URL ?? '' } : {}),
    ...(process.env.SCHEMA_REGISTRY_URL ? { SCHEMA_REGISTRY_URL: process.env.SCHEMA_REGISTRY_URL } : {}),
  };
  // The services listen only after the stack is up: its servers must not take their ports first.
  if (options.stackPorts === 'auto') keepOut(servicePortsIn(process.env));
  process.stderr.write('starting the local stack (Kafka, FerretDB on PostgreSQL, Mailpit, the schema registry)...\n');
  return startStack({
    dataDir: options.dataDir,
    ports: options.stackPorts === 'auto' ? 'auto' : DEV_PORTS,
    existing,
    progress: (l) => process.stderr.write(`  ${l}\n`),
  });
}

/** The local stack, or 'signal' when a stop signal came first (then whatever had started is stopped). */
async function stackUnlessSignalled(options: StartOptions, signalled: Promise<NodeJS.Signals>): Promise<Stack | 'signal'> {
  const starting = startLocalStack(options);
  const stack = await unlessSignalled(starting, signalled);
  if (stack === 'signal') await (await starting.catch(() => undefined))?.stop();
  return stack;
}

function printStack(stack: Stack): void {
  process.stdout.write('local stack:\n');
  process.stdout.write(`  kafka    ${stack.env.KAFKA_BROKERS}\n  mongodb  ${stack.env.MONGODB_URI}\n  smtp     ${stack.env.SMTP_URL}\n`);
  process.stdout.write(`  schemas  ${stack.env.SCHEMA_REGISTRY_URL}\n`);
  if (stack.env.MAILPIT_URL) process.stdout.write(`  mail API ${stack.env.MAILPIT_URL}/api/v1/messages\n`);
}

/** The retrieval service's folders, inside the data folder (the environment's, when set, win). */
function ragFolders(dataDir: string): Record<string, string> {
  const workspace = join(resolve(dataDir), 'workspace');
  mkdirSync(workspace, { recursive: true });
  return { RAG_ROOTS: workspace, RAG_DATA_DIR: join(resolve(dataDir), 'rag') };
}

const DEV_SECRETS = ['JWT_SECRET', 'WEBHOOK_SECRET', 'PAYMENT_WEBHOOK_SECRET', 'KEY_ENCRYPTION_KEY', 'CONSOLE_SECRET'] as const;

/**
 * Development secrets live with the development data: generated once into the data folder (owner
 * read/write only) and reused, so tokens, keys in transit and signed webhooks stay valid when
 * `svc start` runs again on the same data. Variables set in the environment win.
 */
export function developmentSecrets(dataDir: string, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  if (env.NODE_ENV === 'production') return {};
  const file = join(resolve(dataDir), 'dev-secrets.json');
  let stored: Record<string, string> = {};
  if (existsSync(file)) stored = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  let changed = false;
  for (const name of DEV_SECRETS) {
    if (typeof stored[name] !== 'string') {
      stored[name] = randomBytes(32).toString('hex');
      changed = true;
    }
  }
  if (changed) {
    mkdirSync(resolve(dataDir), { recursive: true });
    writeFileSync(file, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  }
  return Object.fromEntries(DEV_SECRETS.filter((name) => env[name] === undefined).map((name) => [name, stored[name]!]));
}

/**
 * `svc start`: the local stack, then every service; one Ctrl-C (or SIGTERM to the group) stops the
 * services first, while their servers still answer, then the servers, and exits.
 */
export async function startCommand(options: StartOptions): Promise<number> {
  const signalled = untilSignal();
  const stack = await stackUnlessSignalled(options, signalled);
  if (stack === 'signal') return 130;
  let clean = true;
  try {
    // The services get 6 of the 10 seconds a Ctrl-C may take; the servers stop in the rest.
    const env = {
      SHUTDOWN_GRACE_MS: '6000',
      // The local stack's deploy step: register the schemas before the services start.
      SCHEMA_REGISTER_AT_START: 'true',
      ...ragFolders(options.dataDir),
      ...process.env,
      ...developmentSecrets(options.dataDir),
      ...stack.env,
    };
    const starting = startServices(SERVICES, env);
    const platform = await unlessSignalled(starting, signalled);
    if (platform === 'signal') {
      clean = (await (await starting.catch(() => undefined))?.stop()) ?? true;
      return 130;
    }
    printStack(stack);
    process.stdout.write('services:\n');
    printUrls(platform.services);
    process.stdout.write(`projects the RAG service may index go under ${platform.runtime.config.rag.roots.join(', ')}\n`);
    process.stdout.write('press Ctrl-C to stop\n');
    await signalled;
    process.stderr.write('stopping the services...\n');
    clean = await platform.stop();
  } finally {
    process.stderr.write('stopping the local stack...\n');
    await stack.stop();
  }
  return clean ? 0 : 1;
}

export async function stackCommand(options: StartOptions): Promise<number> {
  const signalled = untilSignal();
  const stack = await stackUnlessSignalled(options, signalled);
  if (stack === 'signal') return 130;
  printStack(stack);
  process.stdout.write(
    `environment:\n  export KAFKA_BROKERS=${stack.env.KAFKA_BROKERS} MONGODB_URI=${stack.env.MONGODB_URI} SMTP_URL=${stack.env.SMTP_URL} MAILPIT_URL=${stack.env.MAILPIT_URL} SCHEMA_REGISTRY_URL=${stack.env.SCHEMA_REGISTRY_URL}\npress Ctrl-C to stop\n`,
  );
  await signalled;
  await stack.stop();
  return 0;
}
