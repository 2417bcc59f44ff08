import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ManagedProcess, freePort, portIsFree, waitUntil } from './processes.ts';
import { binariesIn, ensureCluster, postgresBinaries, postgresCommand, trustNetwork } from './postgres.ts';
import { httpOk, kafkaRoundTrip, mongoPing, postgresReady, smtpGreeting } from './probes.ts';
import { scramFormatArgument, scramListener, withScramListener, type KafkaScramListener } from './kafka/scram-listener.ts';

const HERE = dirname(fileURLToPath(import.meta.url));

export interface StackPorts {
  kafka: number;
  kafkaController: number;
  mongo: number;
  /** PostgreSQL under FerretDB. */
  postgres: number;
  /** PostgreSQL with pgvector: the code index's shared engine (RAG_DATABASE_URL). */
  ragPostgres: number;
  smtp: number;
  mailHttp: number;
  /** The schema registry's HTTP API. */
  schemaRegistry: number;
}

/** The development stack's well-known ports; tests pick free ones instead. */
export const DEV_PORTS: StackPorts = {
  kafka: 9092,
  kafkaController: 9093,
  mongo: 27017,
  postgres: 55432,
  ragPostgres: 55433,
  smtp: 1025,
  mailHttp: 8025,
  schemaRegistry: 8091,
};

/**
 * FerretDB's storage. PostgreSQL by default, chosen by measurement (docs/operations.md: Local stack); the
 * SQLite backend stays selectable (SVC_LOCAL_MONGO_BACKEND=sqlite) so the comparison can be rerun.
 */
export type MongoBackend = 'postgresql' | 'sqlite';

export interface StackEnv {
  KAFKA_BROKERS: string;
  MONGODB_URI: string;
  SMTP_URL: string;
  /** Mailpit's HTTP API, where tests read the mail that was sent. */
  MAILPIT_URL: string;
  /**
   * PostgreSQL 18 with the vector and pg_trgm extensions (deploy/local/pgvector), for the shared code
   * index; '' when the stack was not asked for it (StackOptions.ragDatabase).
   */
  RAG_DATABASE_URL: string;
  /** A Confluent-compatible schema registry's API (Apicurio's /apis/ccompat/v7 locally). */
  SCHEMA_REGISTRY_URL: string;
}

export interface StackOptions {
  dataDir: string;
  ports: StackPorts | 'auto';
  /** An existing server for a part skips starting it (KAFKA_BROKERS, MONGODB_URI, SMTP_URL + MAILPIT_URL, RAG_DATABASE_URL, SCHEMA_REGISTRY_URL). */
  existing?: Partial<StackEnv>;
  progress?: (line: string) => void;
  readyTimeoutMs?: number;
  mongoBackend?: MongoBackend;
  /** Messages Mailpit keeps before dropping the oldest (its default 500); 0 keeps all. */
  mailMaxMessages?: number;
  /**
   * Also open a SASL_PLAINTEXT listener (SCRAM-SHA-512, one user) on a free port, for tests of the
   * platform's KAFKA_SASL_* settings. Needs a fresh data folder: the user is made when it is formatted.
   */
  kafkaScram?: boolean;
  /**
   * Also start PostgreSQL with pgvector (RAG_DATABASE_URL). Off by default: no service reads the shared
   * code index yet (issue 25 moves it there); the tests of that engine ask for it.
   */
  ragDatabase?: boolean;
  /**
   * The address the servers listen on and Kafka advertises (default 127.0.0.1). `npm run play` gives the
   * gateway of its podman network, so that the pods reach the stack and nothing else on the host's
   * network does.
   */
  host?: string;
  /** A network (CIDR) whose clients the pgvector PostgreSQL lets in, beside loopback (the pods of `npm run play`). */
  clientNetwork?: string;
}

export interface Component {
  name: 'kafka' | 'mongo' | 'mail' | 'rag-db' | 'schema-registry';
  /** The server processes, in start order (FerretDB's PostgreSQL before FerretDB). */
  processes: ManagedProcess[];
  ready(): Promise<void>;
  /** Starts the process and waits until it answers. */
  start(): Promise<void>;
  /** A clean stop, dependents first. */
  stop(): Promise<void>;
  /** Every process killed at once, as in a crash. */
  kill(): Promise<void>;
}

export interface Stack {
  env: StackEnv;
  /** The ports it started its servers on (for starting again on the same ones). */
  ports: StackPorts;
  /** The SCRAM listener and its user, when `kafkaScram` asked for one and the stack started Kafka. */
  kafkaScram?: KafkaScramListener;
  components: Component[];
  component(name: Component['name']): Component;
  stop(): Promise<void>;
}

/** Runs a provision script and returns the path it prints last; its progress goes to our stderr. */
export function provision(part: 'kafka' | 'ferretdb' | 'mailpit' | 'pgvector' | 'schema-registry'): string {
  const out = execFileSync('bash', [join(HERE, part, 'provision.sh')], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  const last = out.trim().split('\n').pop();
  if (!last) throw new Error(`deploy/local/${part}/provision.sh printed no path`);
  return last;
}

async function choosePorts(ports: StackOptions['ports']): Promise<StackPorts> {
  if (ports !== 'auto') {
    return ports;
  }
  return {
    kafka: await freePort(),
    kafkaController: await freePort(),
    mongo: await freePort(),
    postgres: await freePort(),
    ragPostgres: await freePort(),
    smtp: await freePort(),
    mailHttp: await freePort(),
    schemaRegistry: await freePort(),
  };
}

function mongoBackendFromEnv(): MongoBackend {
  const value = process.env.SVC_LOCAL_MONGO_BACKEND ?? 'postgresql';
  if (value !== 'postgresql' && value !== 'sqlite') throw new Error(`SVC_LOCAL_MONGO_BACKEND must be postgresql or sqlite, not "${value}"`);
  return value;
}

interface Step {
  process: ManagedProcess;
  ready: () => Promise<void>;
}

/** A part of the stack: its processes started in order, each waited on, and stopped in reverse. */
function component(name: Component['name'], steps: readonly Step[], timeoutMs: number, progress: (s: string) => void): Component {
  const last = steps[steps.length - 1]!;
  return {
    name,
    processes: steps.map((s) => s.process),
    ready: last.ready,
    async start() {
      const started = Date.now();
      for (const step of steps) {
        step.process.start();
        await waitUntil(step.process.name, step.ready, timeoutMs, step.process.diedEarly());
      }
      progress(`${name} ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
    },
    async stop() {
      for (const step of [...steps].reverse()) await step.process.stop();
    },
    async kill() {
      await Promise.all(steps.map((s) => s.process.kill()));
    },
  };
}

/**
 * Starts (as plain child processes) whichever of Kafka, FerretDB and Mailpit the environment does
 * not already name, each waited on by a real round trip. Data lives under `dataDir`.
 */
export async function startStack(options: StackOptions): Promise<Stack> {
  const progress = options.progress ?? (() => undefined);
  const timeoutMs = options.readyTimeoutMs ?? 120_000;
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const existing = options.existing ?? {};
  const ports = await choosePorts(options.ports);
  const components: Component[] = [];
  const mongoBackend = options.mongoBackend ?? mongoBackendFromEnv();
  const host = options.host ?? '127.0.0.1';

  if (options.ports !== 'auto') {
    const wanted: [string, number, boolean][] = [
      ['Kafka', ports.kafka, !existing.KAFKA_BROKERS],
      ['Kafka controller', ports.kafkaController, !existing.KAFKA_BROKERS],
      ['FerretDB', ports.mongo, !existing.MONGODB_URI],
      ['PostgreSQL', ports.postgres, !existing.MONGODB_URI && mongoBackend === 'postgresql'],
      ['PostgreSQL with pgvector', ports.ragPostgres, Boolean(options.ragDatabase) && !existing.RAG_DATABASE_URL],
      ['Mailpit SMTP', ports.smtp, !existing.SMTP_URL],
      ['Mailpit HTTP', ports.mailHttp, !existing.SMTP_URL],
      ['the schema registry', ports.schemaRegistry, !existing.SCHEMA_REGISTRY_URL],
    ];
    for (const [what, port, needed] of wanted) {
      if (needed && !(await portIsFree(port))) {
        throw new Error(
          `port ${port} for ${what} is taken: stop whatever uses it, or point the matching variable (KAFKA_BROKERS, MONGODB_URI, SMTP_URL, RAG_DATABASE_URL, SCHEMA_REGISTRY_URL) at an existing server`,
        );
      }
    }
  }

  const env: StackEnv = {
    KAFKA_BROKERS: existing.KAFKA_BROKERS ?? `${host}:${ports.kafka}`,
    MONGODB_URI: existing.MONGODB_URI ?? `mongodb://${host}:${ports.mongo}/`,
    SMTP_URL: existing.SMTP_URL ?? `smtp://${host}:${ports.smtp}`,
    MAILPIT_URL: existing.MAILPIT_URL ?? (existing.SMTP_URL ? '' : `http://${host}:${ports.mailHttp}`),
    RAG_DATABASE_URL: existing.RAG_DATABASE_URL ?? (options.ragDatabase ? `postgres://postgres@${host}:${ports.ragPostgres}/postgres` : ''),
    SCHEMA_REGISTRY_URL: existing.SCHEMA_REGISTRY_URL ?? `http://${host}:${ports.schemaRegistry}/apis/ccompat/v7`,
  };

  let kafkaScram: KafkaScramListener | undefined;
  if (!existing.KAFKA_BROKERS) {
    const libs = provision('kafka');
    const kafkaDir = join(dataDir, 'kafka');
    const logDirs = join(kafkaDir, 'data');
    mkdirSync(logDirs, { recursive: true });
    let properties = readFileSync(join(HERE, 'kafka', 'server.properties.template'), 'utf8')
      .replaceAll('${KAFKA_PORT}', String(ports.kafka))
      .replaceAll('${CONTROLLER_PORT}', String(ports.kafkaController))
      .replaceAll('${DATA_DIR}', logDirs)
      // The client listener (and what the broker advertises) on `host`; the controller stays on loopback.
      .replaceAll(`PLAINTEXT://127.0.0.1:`, `PLAINTEXT://${host}:`);
    let runEnv: NodeJS.ProcessEnv | undefined;
    if (options.kafkaScram) {
      kafkaScram = scramListener(await freePort());
      properties = withScramListener(properties, kafkaScram);
      runEnv = { ...process.env, KAFKA_FORMAT_ADD_SCRAM: scramFormatArgument(kafkaScram) };
    }
    const propsFile = join(kafkaDir, 'server.properties');
    writeFileSync(propsFile, properties);
    const proc = new ManagedProcess(
      'kafka',
      'bash',
      [join(HERE, 'kafka', 'run.sh'), libs, propsFile, logDirs],
      join(dataDir, 'kafka.log'),
      runEnv ? { env: runEnv } : {},
    );
    components.push(component('kafka', [{ process: proc, ready: () => kafkaRoundTrip([env.KAFKA_BROKERS]) }], timeoutMs, progress));
  }
  if (!existing.MONGODB_URI) {
    const bin = provision('ferretdb');
    const steps: Step[] = [];
    const ferretArgs = ['-listen-addr', `${host}:${ports.mongo}`, '-log-level', 'warn'];
    if (mongoBackend === 'postgresql') {
      const binaries = postgresBinaries();
      const pgData = join(dataDir, 'postgres');
      const pgLog = join(dataDir, 'postgres.log');
      ensureCluster(binaries, pgData, pgLog);
      const [command, args] = postgresCommand(binaries, pgData, ports.postgres);
      steps.push({
        process: new ManagedProcess('postgres', command, args, pgLog, { stopSignal: 'SIGINT' }),
        ready: () => postgresReady('127.0.0.1', ports.postgres),
      });
      // FerretDB holds a pooled connection per statement of an update command until the command ends
      // (events/projection.ts, MAX_BULK_OPERATIONS); its default pool of 50 lets two projections'
      // full batches catching up at once wait on each other for good. 150 of PostgreSQL's 200.
      ferretArgs.push(
        '-handler',
        'postgresql',
        '-postgresql-url',
        `postgres://postgres@127.0.0.1:${ports.postgres}/postgres?pool_max_conns=150`,
      );
    } else {
      ferretArgs.push('-handler', 'sqlite', '-state-dir', join(dataDir, 'ferretdb'));
    }
    steps.push({
      process: new ManagedProcess('ferretdb', bin, ferretArgs, join(dataDir, 'ferretdb.log')),
      ready: () => mongoPing(env.MONGODB_URI),
    });
    components.push(component('mongo', steps, timeoutMs, progress));
  }
  if (options.ragDatabase && !existing.RAG_DATABASE_URL) {
    const binaries = binariesIn(provision('pgvector'));
    const pgData = join(dataDir, 'rag-postgres');
    const pgLog = join(dataDir, 'rag-postgres.log');
    ensureCluster(binaries, pgData, pgLog);
    if (options.clientNetwork) trustNetwork(pgData, options.clientNetwork);
    const [command, args] = postgresCommand(binaries, pgData, ports.ragPostgres, host);
    const proc = new ManagedProcess('rag-postgres', command, args, pgLog, { stopSignal: 'SIGINT' });
    components.push(component('rag-db', [{ process: proc, ready: () => postgresReady(host, ports.ragPostgres) }], timeoutMs, progress));
  }
  if (!existing.SMTP_URL) {
    const bin = provision('mailpit');
    const proc = new ManagedProcess(
      'mailpit',
      bin,
      [
        '--smtp',
        `${host}:${ports.smtp}`,
        '--listen',
        `${host}:${ports.mailHttp}`,
        '--database',
        join(dataDir, 'mailpit.db'),
        '--smtp-auth-accept-any',
        '--smtp-auth-allow-insecure',
        '--max',
        String(options.mailMaxMessages ?? 500),
      ],
      join(dataDir, 'mailpit.log'),
    );
    const ready = async () => {
      await smtpGreeting(host, ports.smtp);
      await httpOk(`${env.MAILPIT_URL}/readyz`);
    };
    components.push(component('mail', [{ process: proc, ready }], timeoutMs, progress));
  }

  if (!existing.SCHEMA_REGISTRY_URL) {
    // Its storage is a database file in the data folder: schema ids must survive a restart, since
    // the records on Kafka name them for good.
    const jar = provision('schema-registry');
    const proc = new ManagedProcess(
      'schema-registry',
      'bash',
      [join(HERE, 'schema-registry', 'run.sh'), jar, String(ports.schemaRegistry), join(dataDir, 'schema-registry'), host],
      join(dataDir, 'schema-registry.log'),
    );
    const ready = () => httpOk(`http://${host}:${ports.schemaRegistry}/health/ready`);
    components.push(component('schema-registry', [{ process: proc, ready }], timeoutMs, progress));
  }

  const stack: Stack = {
    env,
    ports,
    ...(kafkaScram ? { kafkaScram } : {}),
    components,
    component(name) {
      const c = components.find((x) => x.name === name);
      if (!c) throw new Error(`the stack did not start ${name} (an existing server was given)`);
      return c;
    },
    async stop() {
      await Promise.all(components.map((c) => c.stop()));
    },
  };
  try {
    // Mongo, mail and the rag database start in a blink; Kafka's JVM dominates, so all start together.
    await Promise.all(components.map((c) => c.start()));
  } catch (err) {
    await stack.stop();
    throw err;
  }
  return stack;
}
