import { expect } from 'chai';
import { createAppRuntime } from '../../../app/runtime.ts';
import { ensureOauthIndexes, mongoAdapter } from '../../../services/accounts/oauth/mongo-adapter.ts';
import type { Runtime } from '../../../services/platform/runtime.ts';
import { testConfig, testLogger } from '../../support/env.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

/**
 * The authorization server's storage on FerretDB: an id the database cannot hold (a NUL, a lone
 * surrogate: `client_id=%00` on the token endpoint) is simply not there, never a 500 (found by
 * `npm run fuzz` on POST /oauth/token and /oauth/revoke).
 */
describe('OAuth storage over the accounts database (integration)', () => {
  let rt: Runtime;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    rt = await createAppRuntime(testConfig(await useStack()), testLogger());
    await ensureOauthIndexes(rt.mongo.db);
  });

  after(async () => {
    await rt?.mongo.db.dropDatabase().catch(() => undefined);
    await rt?.close();
  });

  it('answers "not there" for ids the database cannot hold, and still finds what it stored', async () => {
    const Adapter = mongoAdapter(rt.mongo.db);
    const clients = new Adapter('Client');
    const tokens = new Adapter('RefreshToken');
    await clients.upsert('client-1', { client_id: 'client-1', redirect_uris: ['http://127.0.0.1/cb'] });
    for (const id of ['\u0000', 'client-1\u0000', '\uD800', 'a\uDC00b']) {
      expect(await clients.find(id), JSON.stringify(id)).to.equal(undefined);
      expect(await tokens.findByUid(id)).to.equal(undefined);
      expect(await tokens.findByUserCode(id)).to.equal(undefined);
      await tokens.consume(id);
      await tokens.destroy(id);
      await tokens.revokeByGrantId(id);
    }
    expect((await clients.find('client-1'))?.client_id).to.equal('client-1');
  });
});
