import { randomUUID } from 'node:crypto';
import { loadConfig, type Config } from '../../services/platform/config.ts';
import { createLogger, type Logger } from '../../services/platform/logger.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';

/** Environment for a test: the stack's servers, a database of its own, quiet logs. */
export function testEnv(stack: StackEnv, overrides: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    KAFKA_BROKERS: stack.KAFKA_BROKERS,
    MONGODB_URI: stack.MONGODB_URI,
    SMTP_URL: stack.SMTP_URL,
    SCHEMA_REGISTRY_URL: stack.SCHEMA_REGISTRY_URL,
    // The test set-up's deploy step: each test's topic prefix makes subjects of its own to register.
    SCHEMA_REGISTER_AT_START: 'true',
    MONGODB_DB: `test_${randomUUID().slice(0, 8)}`,
    // Each test's services get topics and consumer groups of their own on the shared broker.
    KAFKA_TOPIC_PREFIX: `t${randomUUID().slice(0, 8)}.`,
    KAFKA_PUBLISH_TIMEOUT_MS: '3000',
    HTTP_HOST: '127.0.0.1',
    // Suites sign many users up from 127.0.0.1 within a minute; the spec of these limits sets its own.
    SIGNUPS_PER_IP_PER_HOUR: '100000',
    SIGNUPS_PER_MINUTE: '100000',
    // The provider's sample payloads are test-mode events; the spec of that guard turns it off.
    PAYMENT_ALLOW_TEST_MODE: 'true',
    ...overrides,
  };
}

export const testConfig = (stack: StackEnv, overrides: NodeJS.ProcessEnv = {}): Config => loadConfig(testEnv(stack, overrides));

export const testLogger = (): Logger => createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');

/** Polls until `check` returns a value other than undefined; every poll is a real read. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let delay = 20;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 250);
  }
}
