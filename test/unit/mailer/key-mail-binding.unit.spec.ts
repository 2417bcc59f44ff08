import { expect } from 'chai';
import { createCipheriv, randomBytes } from 'node:crypto';
import type { Effects } from '../../../events/effects.ts';
import { PermanentError } from '../../../events/errors.ts';
import { newEvent } from '../../../events/envelope.ts';
import type { HandlerContext } from '../../../events/consumer.ts';
import type { KeyGenerated, KeyGeneratedData } from '../../../services/keys/events.ts';
import { encryptKey } from '../../../services/keys/key-crypto.ts';
import { generateApiKey, hashKey, last4 } from '../../../services/keys/key-format.ts';
import { mailHandler } from '../../../services/mailer/mail.consumer.ts';
import { mailMetrics } from '../../../services/mailer/metrics.ts';
import { owedMail, type MailSettings } from '../../../services/mailer/owed-mail.ts';
import type { Mail, Mailer } from '../../../services/mailer/transport.ts';
import { createLogger } from '../../../services/platform/logger.ts';

const keyEncryptionKey = randomBytes(32);
const settings: MailSettings = {
  keyEncryptionKey,
  reactivateUrl: 'https://svc.example/billing',
  pricingUrl: 'https://svc.example/pricing',
  consoleUrl: 'https://console.svc.example',
};

function keyEvent(
  apiKey: string,
  encryptedKey: string,
  subscriptionId: string,
): KeyGenerated & { position: { topic: string; partition: number; offset: string } } {
  const data: KeyGeneratedData = {
    keyHash: hashKey(apiKey),
    last4: last4(apiKey),
    tier: 'pro',
    customerId: 'cus-1',
    subscriptionId,
    email: `${subscriptionId}@example.test`,
    encryptedKey,
    source: 'subscription',
    generation: 0,
    replacesLast4: null,
  };
  return { ...newEvent('key.generated', data), position: { topic: 'keys.events', partition: 0, offset: '0' } };
}

/** What encryptKey wrote before keys were bound to their event. */
function legacyBlob(text: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyEncryptionKey, iv, { authTagLength: 16 });
  const ciphertext = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
}

async function deliver(event: ReturnType<typeof keyEvent>): Promise<{ sent: Mail[]; error: unknown }> {
  const sent: Mail[] = [];
  const mailer: Mailer = { send: async (m) => void sent.push(m), verify: async () => undefined, close: () => undefined };
  const effects = {
    claim: async () => ({ outcome: 'owned', saved: undefined, attempts: 1, performed: false }),
    performed: () => undefined,
    done: async () => undefined,
    release: async () => undefined,
    fail: async () => undefined,
  } as unknown as Effects;
  const handler = mailHandler(effects, mailer, (e) => owedMail(e, settings), createLogger('silent'));
  const context: HandlerContext = { heartbeat: async () => undefined, signal: new AbortController().signal };
  try {
    await handler.handle([event], context);
    return { sent, error: undefined };
  } catch (error) {
    return { sent, error };
  }
}

describe('the key e-mail sends only the key its event names (unit)', () => {
  it('mails a key whose ciphertext was made for its own event', async () => {
    const apiKey = generateApiKey();
    const counted = mailMetrics.sent.value({ event_type: 'key.generated' });
    const { sent, error } = await deliver(
      keyEvent(apiKey, encryptKey(apiKey, keyEncryptionKey, { keyHash: hashKey(apiKey), subscriptionId: 'sub-a' }), 'sub-a'),
    );
    expect(error).to.equal(undefined);
    expect(sent).to.have.length(1);
    expect(mailMetrics.sent.value({ event_type: 'key.generated' }), 'svc_emails_sent_total').to.equal(counted + 1);
    expect(sent[0]!.text).to.include(apiKey);
  });

  it('sends nothing when the ciphertext was made for another subscription', async () => {
    const apiKey = generateApiKey();
    const copied = encryptKey(apiKey, keyEncryptionKey, { keyHash: hashKey(apiKey), subscriptionId: 'sub-victim' });
    const { sent, error } = await deliver(keyEvent(apiKey, copied, 'sub-attacker'));
    expect(sent).to.have.length(0);
    expect(error).to.be.instanceOf(PermanentError);
    expect(String((error as Error).message)).not.to.include(apiKey);
  });

  it('sends nothing when an old, unbound ciphertext holds another key than the event names', async () => {
    const named = generateApiKey();
    const other = generateApiKey();
    const { sent, error } = await deliver(keyEvent(named, legacyBlob(other), 'sub-a'));
    expect(sent).to.have.length(0);
    expect(error).to.be.instanceOf(PermanentError);
    expect(String((error as Error).message)).not.to.include(other);
  });

  it('still mails an old, unbound ciphertext of the key the event names (replays of old events)', async () => {
    const apiKey = generateApiKey();
    const { sent, error } = await deliver(keyEvent(apiKey, legacyBlob(apiKey), 'sub-a'));
    expect(error).to.equal(undefined);
    expect(sent.map((m) => m.text.includes(apiKey))).to.deep.equal([true]);
  });
});
