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
 * Kafka (and MongoDB when a bench needs it) for a benchmark: the servers the environment names
 * (KAFKA_BROKERS, MONGODB_URI), else local ones started under a throwaway .data/bench-* folder.
 * Benchmarks send no mail, so no SMTP sink is started.
 */
export async function benchStack(needs: { mongo: boolean }, log: (line: string) => void): Promise<BenchStack> {
  const existing: Partial<StackEnv> = {
    SMTP_URL: process.env.SMTP_URL || 'smtp://127.0.0.1:1',
    MAILPIT_URL: '',
    ...(process.env.KAFKA_BROKERS ? { KAFKA_BROKERS: process.env.KAFKA_BROKERS } : {}),
    ...(process.env.MONGODB_URI ? { MONGODB_URI: process.env.MONGODB_URI } : needs.mongo ? {} : { MONGODB_URI: 'unused' }),
  };
  if (existing.KAFKA_BROKERS && existing.MONGODB_URI) {
    return {
      env: {
        KAFKA_BROKERS: existing.KAFKA_BROKERS,
        MONGODB_URI: existing.MONGODB_URI,
        SMTP_URL: existing.SMTP_URL!,
        MAILPIT_URL: '',
        RAG_DATABASE_URL: '',
      },
      note: needs.mongo ? 'KAFKA_BROKERS and MONGODB_URI from the environment' : 'Kafka from KAFKA_BROKERS',
      stop: async () => undefined,
    };
  }
  const base = resolve('.data');
  mkdirSync(base, { recursive: true });
  let dataDir: string | undefined = mkdtempSync(join(base, 'bench-'));
  const starting = [existing.KAFKA_BROKERS ? '' : 'Kafka', existing.MONGODB_URI ? '' : 'FerretDB'].filter(Boolean).join(' and ');
  log(`starting ${starting} under ${dataDir}`);
  let stack: Awaited<ReturnType<typeof startStack>> | undefined;
  try {
    stack = await startStack({ dataDir, ports: 'auto', existing, progress: log });
  } catch (e) {
    rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  return {
    env: stack.env,
    note: `${starting} started by the bench on this host`,
    async stop() {
      const s = stack;
      stack = undefined;
      await s?.stop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      dataDir = undefined;
    },
  };
}
