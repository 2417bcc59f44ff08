import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createAppRuntime } from '../../../app/runtime.ts';
import { ProviderIdentities, identityId } from '../../../services/accounts/sso/provider-identities.ts';
import { connectMongo, type MongoHandle } from '../../../services/platform/mongo.ts';
import type { Runtime } from '../../../services/platform/runtime.ts';
import { testConfig, testLogger } from '../../support/env.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

/**
 * The provider identities single sign-on matches, on the local stack (FerretDB, Kafka): one identity
 * names one account however two processes race for it, a link its owner removes frees it, and the
 * identity single sign-on made an account with cannot be removed.
 */
describe('single sign-on provider identities (integration)', () => {
  let rt: Runtime;
  let other: MongoHandle;
  const issuer = 'https://idp.example.test';

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    rt = await createAppRuntime(testConfig(await useStack()), testLogger());
    other = await connectMongo((await useStack()).MONGODB_URI, rt.mongo.db.databaseName);
    await new ProviderIdentities(rt.mongo.db, rt.codec, rt.publisher, rt.log).ensureIndexes();
  });

  after(async () => {
    await rt?.mongo.db.dropDatabase().catch(() => undefined);
    await other?.client.close();
    await rt?.close();
  });

  it('gives one identity to one of two accounts claiming it at once, from two processes', async () => {
    const one = new ProviderIdentities(rt.mongo.db, rt.codec, rt.publisher, rt.log);
    const two = new ProviderIdentities(other.db, rt.codec, rt.publisher, rt.log);
    const subject = `s-${randomUUID()}`;
    const claim = (store: ProviderIdentities, userId: string) =>
      store.claim({ issuer, subject, userId, subscriptionId: 'sub-1', via: 'link' }, 'c');
    const results = await Promise.all([claim(one, 'u-a'), claim(two, 'u-b')]);
    expect([...results].sort()).to.deep.equal(['linked', 'taken']);
    const holder = await one.find(issuer, subject);
    expect(holder?.userId).to.equal(results[0] === 'linked' ? 'u-a' : 'u-b');
    expect(await claim(one, holder!.userId)).to.equal('already');
    // The same subject at another issuer is another identity.
    expect(await one.find(`${issuer}/other`, subject)).to.equal(null);
  });

  it('frees a link its owner removed (its event out first), and keeps the one single sign-on made the account with', async () => {
    const store = new ProviderIdentities(rt.mongo.db, rt.codec, rt.publisher, rt.log);
    const subject = `s-${randomUUID()}`;
    expect(await store.claim({ issuer, subject, userId: 'u-1', subscriptionId: 'sub-1', via: 'link' }, 'c')).to.equal('linked');
    const id = identityId(issuer, subject);
    expect(await store.unlink('u-2', id, 'c')).to.equal('none');
    expect(await store.unlink('u-1', id, 'c')).to.equal('unlinked');
    expect(await store.find(issuer, subject)).to.equal(null);
    expect(await store.ofAccount('u-1')).to.deep.equal([]);
    expect(await store.unlink('u-1', id, 'c')).to.equal('none');
    // Free again: another account may link it now.
    expect(await store.claim({ issuer, subject, userId: 'u-2', subscriptionId: 'sub-1', via: 'link' }, 'c')).to.equal('linked');
    expect((await store.find(issuer, subject))?.userId).to.equal('u-2');

    const made = `m-${randomUUID()}`;
    expect(await store.claim({ issuer, subject: made, userId: 'u-3', subscriptionId: 'sub-1', via: 'made' }, 'c')).to.equal('linked');
    expect(await store.unlink('u-3', identityId(issuer, made), 'c')).to.equal('none');
    expect((await store.find(issuer, made))?.userId).to.equal('u-3');
  });
});
