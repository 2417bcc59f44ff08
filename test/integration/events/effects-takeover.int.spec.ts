import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Effects } from '../../../events/effects.ts';
import { connectMongo, type MongoHandle } from '../../../services/platform/mongo.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

/** A takeover records whom it took the claim from: what the fault audits read to excuse a re-sent e-mail. */
describe('effects: a takeover records the owner it replaced, on the real database (integration)', () => {
  let mongo: MongoHandle;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const env = await useStack();
    mongo = await connectMongo(env.MONGODB_URI, `test_${randomUUID().slice(0, 8)}`);
  });

  after(async () => {
    await mongo?.db.dropDatabase().catch(() => undefined);
    await mongo?.client.close();
  });

  it('keeps the earlier owners, oldest first, and adds none for an owner taking its own claim again', async () => {
    let clock = Date.now();
    const now = () => new Date(clock);
    const dead = new Effects(mongo.db, { owner: 'mailer-2:4242:aaaa', leaseMs: 1000, now });
    const next = new Effects(mongo.db, { owner: 'mailer-1:1111:bbbb', leaseMs: 1000, now });
    const id = `welcome-email:${randomUUID()}`;
    expect(await dead.claim(id)).to.include({ outcome: 'owned', attempts: 1 });
    expect((await dead.get(id))?.previousOwners).to.equal(undefined);
    clock += 1500; // the lease of the dead owner ran out
    expect(await next.claim(id)).to.include({ outcome: 'owned', attempts: 2 });
    expect((await next.get(id))?.previousOwners).to.deep.equal(['mailer-2:4242:aaaa']);
    clock += 1500;
    expect(await next.claim(id)).to.include({ outcome: 'owned', attempts: 3 });
    expect((await next.get(id))?.previousOwners, 'its own claim again').to.deep.equal(['mailer-2:4242:aaaa']);
    await next.done(id);
    expect(await dead.claim(id)).to.deep.equal({ outcome: 'done' });
  });
});
