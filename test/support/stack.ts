import { mkdtempSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Component, startStack, type Stack, type StackEnv } from '../../deploy/local/stack.ts';
import { runStackChoice } from './stack-choice.ts';

/**
 * One real stack per test process, started on first use with free ports and a throwaway data
 * folder, stopped by the global teardown. When KAFKA_BROKERS, MONGODB_URI and SMTP_URL name
 * existing servers, those are used and nothing is started. With SVC_STACK=containers and a container
 * engine, the real images instead (test/support/containers-stack.ts); stack-choice.ts says which.
 */

/** What the specs use of a stack; the containers one has no components and no SCRAM listener. */
export type TestStack = Pick<Stack, 'env' | 'kafkaScram' | 'component' | 'stop'>;

let started: Promise<TestStack> | undefined;
let dataDir: string | undefined;

export const STACK_TIMEOUT_MS = 15 * 60_000;

const progress = (l: string) => process.stderr.write(`    [stack] ${l}\n`);

export async function useStack(): Promise<StackEnv> {
  started ??= (async (): Promise<TestStack> => {
    if ((await runStackChoice()).use === 'containers') {
      // Imported only here: testcontainers is loaded by the runs that ask for it.
      const { startContainersStack } = await import('./containers-stack.ts');
      const containers = await startContainersStack(progress);
      return {
        env: containers.env,
        component(name): Component {
          throw new Error(`the containers stack has no ${name} component to stop or kill`);
        },
        stop: containers.stop,
      };
    }
    const base = resolve('.data');
    mkdirSync(base, { recursive: true });
    removeAbandoned(base);
    dataDir = mkdtempSync(join(base, `test-${process.pid}-`));
    const existing: Partial<StackEnv> = {};
    if (process.env.KAFKA_BROKERS) existing.KAFKA_BROKERS = process.env.KAFKA_BROKERS;
    if (process.env.MONGODB_URI) existing.MONGODB_URI = process.env.MONGODB_URI;
    if (process.env.RAG_DATABASE_URL) existing.RAG_DATABASE_URL = process.env.RAG_DATABASE_URL;
    if (process.env.SCHEMA_REGISTRY_URL) existing.SCHEMA_REGISTRY_URL = process.env.SCHEMA_REGISTRY_URL;
    if (process.env.SMTP_URL) {
      existing.SMTP_URL = process.env.SMTP_URL;
      existing.MAILPIT_URL = process.env.MAILPIT_URL ?? '';
    }
    // The SCRAM listener costs the broker a few threads; kafka-security.int.spec.ts needs it.
    return startStack({
      dataDir,
      ports: 'auto',
      existing,
      kafkaScram: true,
      ragDatabase: true,
      progress,
    });
  })();
  return (await started).env;
}

/** Data folders of test runs that were killed before their teardown: their pid is gone. */
function removeAbandoned(base: string): void {
  for (const name of readdirSync(base)) {
    const pid = /^test-(\d+)-/.exec(name)?.[1];
    if (pid && !alive(Number(pid))) rmSync(join(base, name), { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function currentStack(): Promise<TestStack> {
  if (!started) throw new Error('useStack() first');
  return started;
}

/**
 * The stack's own Kafka, for a test that stops or freezes it. Skips the test (or, in a hook, the suite)
 * when an external Kafka was given: the tests do not stop other people's brokers.
 */
export async function ownKafka(context: Mocha.Context): Promise<Component> {
  try {
    return (await currentStack()).component('kafka');
  } catch {
    context.skip();
  }
}

export async function stopStack(): Promise<void> {
  if (!started) return;
  const stack = await started.catch(() => undefined);
  started = undefined;
  await stack?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
}
