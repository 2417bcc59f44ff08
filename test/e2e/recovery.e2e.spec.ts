import { randomInt, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { readDeadLetters } from '../../events/dead-letters.ts';
import { Effects } from '../../events/effects.ts';
import { newEvent } from '../../events/envelope.ts';
import { dlqTopic } from '../../events/topics.ts';
import { billingService } from '../../services/billing/billing.service.ts';
import { webhookIngressService } from '../../services/billing/webhook-ingress.service.ts';
import { hashKey } from '../../services/keys/key-format.ts';
import { getKeyBySubscription } from '../../services/keys/keys.projection.ts';
import { mintKey } from '../../services/keys/new-key.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { mailerService } from '../../services/mailer/mailer.service.ts';
import { smtpMailer } from '../../services/mailer/transport.ts';
import { classifySmtpFailure } from '../../services/mailer/smtp-errors.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { eventually, testEnv, testLogger } from '../support/env.ts';
import { deliver, subscriptionPayload } from '../support/lemonsqueezy.ts';
import { mailTo, startOwnMailpit, type OwnMailpit } from '../support/mailpit.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { useContractCheck } from '../support/contract-check.ts';

const SIGNING_SECRET = 'recovery-signing-secret-0123456789';
const KEY_ENCRYPTION_KEY = 'ef'.repeat(32);
const PRO_VARIANT = 401789;
const LEASE_MS = 2000;

/**
 * What a process that dies mid-effect leaves behind: a claim in its name, within its lease. The
 * claim is made through the real Effects, as that process would have; the test then checks that the
 * live services finish the effect once, instead of skipping it forever.
 */
describe('effects survive a crash mid-effect, and a bad address does not block the mail (e2e)', function () {
  this.timeout(120_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let webhooks: string;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    if (!stack.MAILPIT_URL) this.skip();
    const port = await freePort();
    webhooks = `http://127.0.0.1:${port}`;
    platform = await startServices(
      [keysService, webhookIngressService, billingService, mailerService],
      testEnv(stack, {
        WEBHOOKS_PORT: String(port),
        KEYS_PORT: String(await freePort()),
        PAYMENT_WEBHOOK_SECRET: SIGNING_SECRET,
        KEY_ENCRYPTION_KEY,
        PAYMENT_VARIANT_TIERS: `${PRO_VARIANT}:pro`,
        EFFECT_LEASE_MS: String(LEASE_MS),
      }),
      testLogger(),
    );
  });

  after(async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
  });

  // Every answer of this spec, checked against the answering face's OpenAPI document.
  useContractCheck();

  const deadProcess = () => new Effects(platform.runtime.mongo.db, { owner: `dead-${randomUUID()}`, leaseMs: LEASE_MS });

  it('an e-mail claimed by a process that died before sending is sent once its lease ends, exactly once', async () => {
    const userId = randomUUID();
    const address = `claimed-${randomUUID()}@example.test`;
    await deadProcess().claim(`welcome-email:${userId}`);
    const claimedAt = Date.now();
    await platform.runtime.publisher.publish(newEvent('account.registered', { userId, email: address, name: 'Crash' }));
    const mails = await eventually(
      'the welcome e-mail',
      async () => {
        const found = await mailTo(stack.MAILPIT_URL, address);
        return found.length > 0 ? found : undefined;
      },
      60_000,
    );
    expect(Date.now() - claimedAt, 'it waited for the lease').to.be.at.least(LEASE_MS - 200);
    expect(mails).to.have.length(1);
    expect((await new Effects(platform.runtime.mongo.db).get(`welcome-email:${userId}`))?.status).to.equal('done');
  });

  it('a key minted by a process that died before publishing it is the key the customer gets: one key, one e-mail', async () => {
    const subscriptionId = String(randomInt(10_000_000, 99_999_999));
    const email = `buyer-${randomUUID()}@example.test`;
    // The dead process had minted this key and saved its event before it could publish it.
    const { apiKey, event } = mintKey(
      { tier: 'pro', customerId: 'cus-crash', subscriptionId, email, source: 'subscription' },
      Buffer.from(KEY_ENCRYPTION_KEY, 'hex'),
      { correlationId: 'crashed-issuer' },
    );
    const dead = deadProcess();
    await dead.claim(`issue-key:${subscriptionId}`);
    await dead.save(`issue-key:${subscriptionId}`, { event });

    const status = (
      await deliver(
        webhooks,
        SIGNING_SECRET,
        subscriptionPayload('subscription_created', {
          subscriptionId,
          userId: null,
          attributes: { user_email: email, variant_id: PRO_VARIANT },
        }),
      )
    ).status;
    expect(status).to.equal(200);
    const [mail] = await eventually(
      'the key e-mail',
      async () => {
        const found = (await mailTo(stack.MAILPIT_URL, email)).filter((m) => /API key/.test(m.Subject));
        return found.length > 0 ? found : undefined;
      },
      60_000,
    );
    expect(mail!.Text).to.include(apiKey);
    expect((await getKeyBySubscription(platform.runtime.mongo.db, subscriptionId))?.keyHash).to.equal(hashKey(apiKey));
    expect((await mailTo(stack.MAILPIT_URL, email)).filter((m) => /API key/.test(m.Subject))).to.have.length(1);
  });

  describe('a mail server that refuses an address for good', () => {
    let own: OwnMailpit;
    let refusing: RunningPlatform;
    let dataDir: string;

    before(async () => {
      dataDir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-mailpit-`));
      own = await startOwnMailpit(dataDir, { allowedRecipients: '@accepted\\.test$' });
      // One partition: the refused e-mail and the next one share it, as they would under load.
      refusing = await startServices(
        [mailerService],
        testEnv(stack, { SMTP_URL: own.smtpUrl, KAFKA_TOPIC_PARTITIONS: '1', EFFECT_LEASE_MS: String(LEASE_MS) }),
        testLogger(),
      );
    });

    after(async () => {
      await refusing?.runtime.mongo.db.dropDatabase().catch(() => undefined);
      await refusing?.stop();
      await own?.stop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    it('dead-letters that e-mail with the reason and sends the next one in the same partition', async () => {
      const rt = refusing.runtime;
      const bad = newEvent('account.registered', { userId: randomUUID(), email: `nobody-${randomUUID()}@refused.test`, name: 'Bad' });
      const good = newEvent('account.registered', { userId: randomUUID(), email: `someone-${randomUUID()}@accepted.test`, name: 'Good' });
      await rt.publisher.publish(bad);
      await rt.publisher.publish(good);
      await eventually(
        'the next e-mail',
        async () => ((await mailTo(own.apiUrl, good.data.email)).length === 1 ? true : undefined),
        60_000,
      );
      const letters = await eventually(
        'the dead letter',
        async () => {
          const found = (
            await readDeadLetters({
              kafka: rt.kafka,
              admin: rt.admin,
              topic: dlqTopic(rt.catalog.topicOf('account.registered')),
              groupPrefix: rt.config.kafka.topicPrefix,
              limit: 10,
            })
          ).filter((l) => l.eventId === bad.metadata.eventId);
          return found.length > 0 ? found : undefined;
        },
        30_000,
      );
      expect(letters[0]!.error).to.match(/PermanentError: .*reply 5\d\d/);
      expect(letters[0]!.error).not.to.include('refused.test');
      const effect = await new Effects(rt.mongo.db).get(`welcome-email:${bad.data.userId}`);
      expect(effect?.status).to.equal('failed');
    });
  });

  it('a mail server that accepts the connection and never answers fails the send within the bounds, as transient', async () => {
    const silent: Server = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    const mailer = smtpMailer(`smtp://127.0.0.1:${port}`, 'svc <no-reply@svc.local>');
    const started = Date.now();
    try {
      const err = await mailer.send({ to: 'a@example.test', subject: 's', text: 't', html: 'h', messageId: '<silent@svc.local>' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, 'the send failed').to.be.instanceOf(Error);
      expect(Date.now() - started).to.be.lessThan(15_000);
      expect(classifySmtpFailure(err).kind).to.equal('transient');
    } finally {
      mailer.close();
      silent.close();
    }
  });
});
