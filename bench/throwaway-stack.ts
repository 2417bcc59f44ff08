import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startStack, type StackEnv } from '../deploy/local/stack.ts';

export interface BenchStack {
  env: StackEnv;
  /** What ran where, for the report. */
  note: string;
  /** Stops what this started and removes its data; idempotent. */
  stop(): Promise<void>;
}

/**
 * The servers a benchmark needs: Kafka unless `kafka: false`, MongoDB when `mongo`, PostgreSQL with
 * pgvector when `ragDatabase`. Those the environment names (KAFKA_BROKERS, MONGODB_URI,
 * RAG_DATABASE_URL) are used as they are; the others are started as the local stack starts them,
 * under a throwaway .data/bench-* folder. Benchmarks send no mail, so no SMTP sink is started.
 */
export async function benchStack(
  needs: { mongo: boolean; kafka?: boolean; ragDatabase?: boolean },
  log: (line: string) => void,
): Promise<BenchStack> {
  const kafka = needs.kafka ?? true;
  const ragDatabase = needs.ragDatabase ?? false;
  const existing: Partial<StackEnv> = {
    SMTP_URL: process.env.SMTP_URL || 'smtp://127.0.0.1:1',
    MAILPIT_URL: '',
    ...(process.env.KAFKA_BROKERS ? { KAFKA_BROKERS: process.env.KAFKA_BROKERS } : kafka ? {} : { KAFKA_BROKERS: 'unused' }),
    ...(process.env.MONGODB_URI ? { MONGODB_URI: process.env.MONGODB_URI } : needs.mongo ? {} : { MONGODB_URI: 'unused' }),
    ...(ragDatabase && process.env.RAG_DATABASE_URL ? { RAG_DATABASE_URL: process.env.RAG_DATABASE_URL } : {}),
    // Events need the registry their ids live in, wherever Kafka comes from.
    ...(process.env.SCHEMA_REGISTRY_URL
      ? { SCHEMA_REGISTRY_URL: process.env.SCHEMA_REGISTRY_URL }
      : kafka
        ? {}
        : { SCHEMA_REGISTRY_URL: 'http://unused' }),
  };
  const fromEnv = [
    kafka && existing.KAFKA_BROKERS ? 'KAFKA_BROKERS' : '',
    needs.mongo && existing.MONGODB_URI ? 'MONGODB_URI' : '',
    existing.RAG_DATABASE_URL ? 'RAG_DATABASE_URL' : '',
    kafka && existing.SCHEMA_REGISTRY_URL ? 'SCHEMA_REGISTRY_URL' : '',
  ].filter(Boolean);
  if (existing.KAFKA_BROKERS && existing.MONGODB_URI && existing.SCHEMA_REGISTRY_URL && (!ragDatabase || existing.RAG_DATABASE_URL)) {
    return {
      env: {
        KAFKA_BROKERS: existing.KAFKA_BROKERS,
        MONGODB_URI: existing.MONGODB_URI,
        SMTP_URL: existing.SMTP_URL!,
        MAILPIT_URL: '',
        RAG_DATABASE_URL: existing.RAG_DATABASE_URL ?? '',
        SCHEMA_REGISTRY_URL: existing.SCHEMA_REGISTRY_URL,
      },
      note: `${fromEnv.join(', ')} from the environment`,
      stop: async () => undefined,
    };
  }
  const base = resolve('.data');
  mkdirSync(base, { recursive: true });
  let dataDir: string | undefined = mkdtempSync(join(base, 'bench-'));
  const starting = [
    existing.KAFKA_BROKERS ? '' : 'Kafka',
    existing.MONGODB_URI ? '' : 'FerretDB',
    ragDatabase && !existing.RAG_DATABASE_URL ? 'PostgreSQL with pgvector' : '',
    existing.SCHEMA_REGISTRY_URL ? '' : 'the schema registry',
  ]
    .filter(Boolean)
    .join(' and ');
  log(`starting ${starting} under ${dataDir}`);
  let stack: Awaited<ReturnType<typeof startStack>> | undefined;
  try {
    stack = await startStack({ dataDir, ports: 'auto', existing, ragDatabase, progress: log });
  } catch (e) {
    rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  return {
    env: stack.env,
    note: `${starting} started by the bench on this host${fromEnv.length > 0 ? `; ${fromEnv.join(', ')} from the environment` : ''}`,
    async stop() {
      const s = stack;
      stack = undefined;
      await s?.stop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      dataDir = undefined;
    },
  };
}
