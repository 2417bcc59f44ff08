import express from 'express';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { accountsService } from '../../services/accounts/accounts.service.ts';
import { keyGate } from '../../services/keys/gate.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { RemoteValidator } from '../../services/keys/remote-validator.ts';
import { mailerService } from '../../services/mailer/mailer.service.ts';
import { listen } from '../../services/platform/service.ts';
import { testEnv, testLogger } from './env.ts';

export interface KeysPlatform {
  platform: RunningPlatform;
  keys: string;
  accounts: string;
  premium: { url: string; close(): Promise<void> };
}

/**
 * Accounts, keys and the mailer on the real stack, plus a premium server on another "host" that validates
 * over HTTP and records uses as every gate does, so a refusal must reach it too. `env` adds to the services'.
 */
export async function startKeysPlatform(stack: StackEnv, pricingUrl: string, env: NodeJS.ProcessEnv): Promise<KeysPlatform> {
  const ports = { accounts: await freePort(), keys: await freePort() };
  const platform = await startServices(
    [accountsService, keysService, mailerService],
    testEnv(stack, { ACCOUNTS_PORT: String(ports.accounts), KEYS_PORT: String(ports.keys), PRICING_URL: pricingUrl, ...env }),
    testLogger(),
  );
  const keys = `http://127.0.0.1:${ports.keys}`;
  const app = express();
  app.use(keyGate({ validator: new RemoteValidator(keys), pricingUrl, publisher: platform.runtime.publisher }));
  app.get('/premium', (_req, res) => res.json({ ok: true }));
  const premium = await listen(app, '127.0.0.1', 0).catch(async (err: unknown) => {
    await platform.stop();
    throw err;
  });
  return { platform, keys, accounts: `http://127.0.0.1:${ports.accounts}`, premium };
}

/** Stops what startKeysPlatform started (if it got that far) and drops the test's database. */
export async function stopKeysPlatform(running: KeysPlatform | undefined): Promise<void> {
  await running?.premium.close();
  await running?.platform.runtime.mongo.db.dropDatabase().catch(() => undefined);
  await running?.platform.stop();
}
