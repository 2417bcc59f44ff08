import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { projectionCollection } from '../../../events/collections.ts';
import { newEvent } from '../../../events/envelope.ts';
import { applyEvents } from '../../../events/projection.ts';
import { connectMongo, type MongoHandle } from '../../../services/platform/mongo.ts';
import type { TeamEvent } from '../../../services/teams/events.ts';
import { SsoDomainClaims } from '../../../services/teams/sso-domain-claims.ts';
import { teamByDomain, workspacesProjection } from '../../../services/teams/workspaces.projection.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

/**
 * One team per single sign-on domain on the local stack's database (FerretDB), as two "processes"
 * see it: a domain is claimed when a team proves it, a proof link is spent once whoever races, and a
 * claim whose team never proved the domain (a process died between claiming and recording) is taken
 * over after a minute, while a proven one never is.
 */
describe('single sign-on domain claims (integration)', () => {
  let one: MongoHandle;
  let two: MongoHandle;
  let offset = 0;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const env = await useStack();
    const dbName = `test_${randomUUID().slice(0, 8)}`;
    one = await connectMongo(env.MONGODB_URI, dbName);
    two = await connectMongo(env.MONGODB_URI, dbName);
    await new SsoDomainClaims(one.db).ensureIndexes();
  });

  after(async () => {
    await one?.db.dropDatabase().catch(() => undefined);
    await one?.client.close();
    await two?.client.close();
  });

  /** Applies a team's events to the workspaces projection as the consumer would (each at its own offset). */
  async function apply(events: TeamEvent[]): Promise<void> {
    const delivered = events.map((e) => ({ ...e, position: { topic: 'teams.events', partition: 0, offset: String(offset++) } }));
    await applyEvents(await projectionCollection(one.db, workspacesProjection.collection), workspacesProjection, delivered);
  }

  /** A team that configured the domain and proved it, through the projection's own events. */
  async function provenTeam(subscriptionId: string, domain: string): Promise<void> {
    const proofId = randomUUID();
    await apply([
      newEvent('team.sso-configured', {
        subscriptionId,
        issuer: 'https://idp.example.test',
        clientId: 'svc',
        encryptedClientSecret: 'sealed',
        domains: [domain],
        configuredBy: 'owner',
      }),
      newEvent('team.sso-domain-proof-requested', {
        subscriptionId,
        proofId,
        domain,
        address: `it@${domain}`,
        tokenHash: randomUUID(),
        encryptedToken: 'sealed',
        expiresAt: new Date(Date.now() + 3_600_000),
        requestedBy: 'owner',
        requestedByEmail: 'owner@example.test',
      }),
      newEvent('team.sso-domain-verified', { subscriptionId, proofId, domain, verifiedBy: 'owner' }),
    ]);
  }

  it('gives a domain to one team, to the same team again, and to no other while the claim is fresh', async () => {
    const claims = new SsoDomainClaims(one.db);
    const other = new SsoDomainClaims(two.db);
    expect(await claims.claim('team-a', ['fresh.test'])).to.deep.equal({ taken: null });
    expect(await claims.claim('team-a', ['fresh.test'])).to.deep.equal({ taken: null });
    expect(await other.claim('team-b', ['fresh.test'])).to.deep.equal({ taken: 'fresh.test' });
    // Two teams claiming one domain at the same moment: one gets it.
    const raced = await Promise.all([claims.claim('team-c', ['raced.test']), other.claim('team-d', ['raced.test'])]);
    expect(raced.filter((r) => r.taken === null)).to.have.length(1);
  });

  it("takes over a minute-old claim whose team never proved the domain (even one that named it), never a proven team's", async () => {
    const claims = new SsoDomainClaims(one.db);
    const later = new Date(Date.now() + 120_000);
    expect(await claims.claim('team-dead', ['orphan.test'])).to.deep.equal({ taken: null });
    expect(await new SsoDomainClaims(two.db).claim('team-live', ['orphan.test'], later)).to.deep.equal({ taken: null });

    // A team that only named the domain (configured, not proven) holds nothing once its claim is stale.
    await apply([
      newEvent('team.sso-configured', {
        subscriptionId: 'team-named',
        issuer: 'https://idp.example.test',
        clientId: 'svc',
        encryptedClientSecret: 'sealed',
        domains: ['named.test'],
        configuredBy: 'owner',
      }),
    ]);
    expect(await claims.claim('team-named', ['named.test'])).to.deep.equal({ taken: null });
    expect(await new SsoDomainClaims(two.db).claim('team-prover', ['named.test'], later)).to.deep.equal({ taken: null });

    await provenTeam('team-proven', 'proven.test');
    expect((await teamByDomain(one.db, 'proven.test'))?.subscriptionId).to.equal('team-proven');
    expect(await claims.claim('team-proven', ['proven.test'])).to.deep.equal({ taken: null });
    expect(await new SsoDomainClaims(two.db).claim('team-late', ['proven.test'], later)).to.deep.equal({ taken: 'proven.test' });
  });

  it('spends a proof link once, whichever process asks first, however many ask together', async () => {
    const proofId = randomUUID();
    const asks = Array.from({ length: 10 }, (_, i) => new SsoDomainClaims(i % 2 ? one.db : two.db).spend('team-a', proofId));
    const spent = await Promise.all(asks);
    expect(spent.filter(Boolean)).to.have.length(1);
    expect(await new SsoDomainClaims(one.db).spend('team-a', proofId)).to.equal(false);
    expect(await new SsoDomainClaims(one.db).spend('team-a', randomUUID())).to.equal(true);
  });
});
