import { execFile } from 'node:child_process';
import { randomInt, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { billingService } from '../../services/billing/billing.service.ts';
import { getSubscription } from '../../services/billing/subscriptions.projection.ts';
import { webhookIngressService } from '../../services/billing/webhook-ingress.service.ts';
import { getKeyBySubscription } from '../../services/keys/keys.projection.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { mailerService } from '../../services/mailer/mailer.service.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { EXIT } from '../../app/cli/exit.ts';
import { eventually, testEnv, testLogger } from '../support/env.ts';
import { deliver, subscriptionPayload } from '../support/lemonsqueezy.ts';
import { mailTo } from '../support/mailpit.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { useContractCheck } from '../support/contract-check.ts';

const SIGNING_SECRET = 'dlq-signing-secret-0123456789';
const VARIANT = 501789;
const run = promisify(execFile);

/** The operator's side: a webhook billing cannot use, seen with `svc dlq`, fixed, re-driven once. */
describe('dead letters: seen, explained and re-driven once with the real `svc dlq` (e2e)', function () {
  this.timeout(120_000);
  let stack: StackEnv;
  let env: NodeJS.ProcessEnv;
  let rest: RunningPlatform;
  let billing: RunningPlatform | undefined;
  let webhooks: string;

  const svc = async (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
    try {
      const { stdout, stderr } = await run(process.execPath, ['--disable-warning=TimeoutNegativeWarning', 'app/cli/svc.ts', ...args], {
        env: { ...process.env, ...env },
        timeout: 60_000,
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  };

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    if (!stack.MAILPIT_URL) this.skip();
    const port = await freePort();
    webhooks = `http://127.0.0.1:${port}`;
    // Billing starts without the variant: its subscriptions cannot be decided yet.
    env = testEnv(stack, {
      WEBHOOKS_PORT: String(port),
      KEYS_PORT: String(await freePort()),
      PAYMENT_WEBHOOK_SECRET: SIGNING_SECRET,
      KEY_ENCRYPTION_KEY: 'ab'.repeat(32),
      PAYMENT_VARIANT_TIERS: '',
    });
    rest = await startServices([keysService, webhookIngressService, mailerService], env, testLogger());
    billing = await startServices([billingService], env, testLogger());
  });

  after(async () => {
    await billing?.stop();
    await rest?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await rest?.stop();
  });

  // Every answer of this spec, checked against the answering face's OpenAPI document.
  useContractCheck();

  it('lists and explains what billing could not use, re-drives it after the fix, and applies it once', async () => {
    const subscriptionId = String(randomInt(10_000_000, 99_999_999));
    const email = `dlq-${randomUUID()}@example.test`;
    const garbage = subscriptionPayload('subscription_cancelled', { attributes: { ends_at: 'garbage', variant_id: 'not-a-number' } });
    expect((await deliver(webhooks, SIGNING_SECRET, garbage)).status).to.equal(200);
    const created = subscriptionPayload('subscription_created', {
      subscriptionId,
      userId: null,
      attributes: { user_email: email, variant_id: VARIANT },
    });
    expect((await deliver(webhooks, SIGNING_SECRET, created)).status).to.equal(200);

    const listed = await eventually(
      'two dead letters',
      async () => {
        const out = await svc('dlq', 'list');
        return /payments\.webhooks\.dlq\s+2\s+2/.test(out.stdout) ? out : undefined;
      },
      60_000,
    );
    expect(listed.code).to.equal(EXIT.ok);
    const shown = await svc('dlq', 'show', 'payments.webhooks');
    expect(shown.stdout).to.match(
      /error\s+PoisonMessageError: webhook \S+: subscription_cancelled: data\.attributes\.ends_at must be an ISO 8601 date-time/,
    );
    expect(shown.stdout).to.include(`error    UnknownVariantError: variant ${VARIANT} is not in PAYMENT_VARIANT_TIERS`);
    expect(shown.stdout).to.match(/from\s+\S*payments\.webhooks\/\d+@\d+/);
    expect(shown.stdout, 'no customer data without --payload').not.to.include(email);

    // The fix: billing learns the variant. Then the operator re-drives.
    await billing!.stop();
    billing = await startServices([billingService], { ...env, PAYMENT_VARIANT_TIERS: `${VARIANT}:pro` }, testLogger());
    const redriven = await svc('dlq', 'redrive', 'payments.webhooks');
    expect(redriven.code, redriven.stderr).to.equal(EXIT.ok);
    expect(redriven.stdout).to.match(/re-drove 2 dead letter\(s\) from \S+ to: \S*billing \(2\)/);

    const key = await eventually(
      'the key',
      async () => (await getKeyBySubscription(rest.runtime.mongo.db, subscriptionId))?.keyHash ?? undefined,
      60_000,
    );
    expect(key).to.match(/^[0-9a-f]{64}$/);
    await eventually('the key e-mail', async () => ((await mailTo(stack.MAILPIT_URL, email)).length === 1 ? true : undefined), 60_000);
    expect((await getSubscription(rest.runtime.mongo.db, subscriptionId))?.tier).to.equal('pro');

    // The garbage one failed again, as it must: it is back in the DLQ; nothing was applied twice.
    const again = await eventually(
      'the unusable one dead-lettered again',
      async () => {
        const out = await svc('dlq', 'list');
        return /payments\.webhooks\.dlq\s+3\s+1/.test(out.stdout) ? out : undefined;
      },
      60_000,
    );
    expect(again.code).to.equal(EXIT.ok);
    const second = await svc('dlq', 'redrive', 'payments.webhooks');
    expect(second.stdout).to.match(/re-drove 1 dead letter/);
    expect(await mailTo(stack.MAILPIT_URL, email)).to.have.length(1);
  });

  it('refuses unknown topics and bad arguments with the usage exit code', async () => {
    const unknown = await svc('dlq', 'show', 'no.such.topic');
    expect(unknown.code).to.equal(EXIT.usage);
    expect(unknown.stderr).to.match(/unknown topic "no\.such\.topic"; known: .*payments\.webhooks/);
    expect((await svc('dlq', 'frobnicate')).code).to.equal(EXIT.usage);
  });
});
