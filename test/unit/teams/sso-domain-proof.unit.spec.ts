import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { newEvent } from '../../../events/envelope.ts';
import { owedMail } from '../../../services/mailer/owed-mail.ts';
import type {
  TeamEvent,
  TeamSsoConfiguredData,
  TeamSsoDomainProofRequestedData,
  TeamSsoDomainVerifiedData,
} from '../../../services/teams/events.ts';
import { unclaimableDomainReason } from '../../../services/teams/public-mail-domains.ts';
import { domainProofConfirmInput, domainProofInput, isAddressAt, ssoConfigInput } from '../../../services/teams/sso-config-input.ts';
import {
  DOMAIN_PROOF_TOKEN,
  confirmable,
  domainProofTokenHash,
  newDomainProofToken,
  openDomainProofToken,
  sealDomainProofToken,
} from '../../../services/teams/sso-domain-proof-token.ts';
import { ssoDomainStatuses } from '../../../services/teams/sso-domain-status.ts';
import { evolveTeam, type TeamRecord } from '../../../services/teams/workspaces.projection.ts';

const T0 = new Date('2026-11-27T12:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const SUB = 'sub-team';
const DAY = 24 * 3600;

const configured = (domains: string[], seconds: number, issuer = 'https://idp.example-corp.test') =>
  newEvent(
    'team.sso-configured',
    {
      subscriptionId: SUB,
      issuer,
      clientId: 'svc',
      encryptedClientSecret: 'sealed',
      domains,
      configuredBy: 'owner',
    } satisfies TeamSsoConfiguredData,
    { occurredAt: at(seconds) },
  );
const requested = (proofId: string, domain: string, seconds: number) =>
  newEvent(
    'team.sso-domain-proof-requested',
    {
      subscriptionId: SUB,
      proofId,
      domain,
      address: `it@${domain}`,
      tokenHash: `hash-${proofId}`,
      encryptedToken: 'sealed',
      expiresAt: at(seconds + DAY),
      requestedBy: 'owner',
      requestedByEmail: 'owner@example-corp.test',
    } satisfies TeamSsoDomainProofRequestedData,
    { occurredAt: at(seconds) },
  );
const verified = (proofId: string, domain: string, seconds: number) =>
  newEvent('team.sso-domain-verified', { subscriptionId: SUB, proofId, domain, verifiedBy: 'owner' } satisfies TeamSsoDomainVerifiedData, {
    occurredAt: at(seconds),
  });
const removed = (seconds: number) => newEvent('team.sso-removed', { subscriptionId: SUB, removedBy: 'owner' }, { occurredAt: at(seconds) });

const replay = (events: TeamEvent[]): TeamRecord => events.reduce<TeamRecord | null>((doc, e) => evolveTeam(doc, e), null)!;
const proven = (events: TeamEvent[]) => replay(events).sso?.provenDomains ?? null;

describe('team SSO domain proofs (unit)', () => {
  describe('public mail domains and public suffixes', () => {
    it('refuses the free mail providers, by name and by family under any country suffix, naming the domain', () => {
      for (const domain of [
        'gmail.com',
        'googlemail.com',
        'outlook.com',
        'hotmail.com',
        'hotmail.co.uk',
        'hotmail.fr',
        'live.com',
        'yahoo.com',
        'yahoo.co.jp',
        'icloud.com',
        'me.com',
        'proton.me',
        'protonmail.com',
        'gmx.de',
        'gmx.net',
        'mail.ru',
        'yandex.ru',
        'aol.com',
        'qq.com',
        '163.com',
      ]) {
        const reason = unclaimableDomainReason(domain);
        expect(reason, domain).to.be.a('string');
        expect(reason).to.include(domain).and.to.include('public mail domain');
      }
    });

    it('refuses domains that are public suffixes themselves', () => {
      for (const domain of ['co.uk', 'com.au', 'github.io', 'herokuapp.com'])
        expect(unclaimableDomainReason(domain), domain).to.include('public suffix');
    });

    it("lets a company's own domain through, including ones that merely start like a provider's", () => {
      for (const domain of [
        'example-corp.test',
        'acme.com',
        'live.acme.de',
        'outlook.example-corp.test',
        'gmail.com.example.test',
        'mygmail.com',
      ])
        expect(unclaimableDomainReason(domain), domain).to.equal(null);
    });
  });

  describe('input', () => {
    const base = { subscriptionId: 'sub-1', issuer: 'https://idp.example.test', clientId: 'svc', clientSecret: 's' };

    it('refuses a public mail domain in PUT /team/sso with a message naming it', () => {
      const parsed = ssoConfigInput(false).safeParse({ ...base, domains: ['example-corp.test', 'GMail.com'] });
      expect(parsed.success).to.equal(false);
      expect(parsed.error?.issues[0]?.message).to.include('gmail.com is a public mail domain').and.to.include('cannot be claimed');
      expect(ssoConfigInput(false).safeParse({ ...base, domains: ['example-corp.test'] }).success).to.equal(true);
    });

    it('reads a proof request: the domain normalised, the address optional and checked as an address', () => {
      expect(domainProofInput.parse({ subscriptionId: 's', domain: ' Example-Corp.TEST ', address: 'IT@Example-Corp.test' })).to.deep.equal(
        {
          subscriptionId: 's',
          domain: 'example-corp.test',
          address: 'it@example-corp.test',
        },
      );
      expect(domainProofInput.parse({ subscriptionId: 's', domain: 'example-corp.test' }).address).to.equal(undefined);
      expect(domainProofInput.safeParse({ subscriptionId: 's', domain: 'example-corp.test', address: 'not an address' }).success).to.equal(
        false,
      );
      expect(domainProofInput.safeParse({ subscriptionId: 's', domain: '10.0.0.1' }).success).to.equal(false);
      expect(domainProofConfirmInput.safeParse({ token: 'short' }).success).to.equal(false);
      expect(domainProofConfirmInput.safeParse({ token: newDomainProofToken() }).success).to.equal(true);
    });

    it('takes an address as at the domain only when its domain part is exactly it', () => {
      expect(isAddressAt('it@example-corp.test', 'example-corp.test')).to.equal(true);
      expect(isAddressAt('it@mail.example-corp.test', 'example-corp.test')).to.equal(false);
      expect(isAddressAt('it@example-corp.test.evil.test', 'example-corp.test')).to.equal(false);
      expect(isAddressAt('"a@example-corp.test"@evil.test', 'example-corp.test')).to.equal(false);
    });
  });

  describe('the token', () => {
    const key = randomBytes(32);

    it('is 256 random bits, stored only as its hash, sealed for its own team and domain only', () => {
      const token = newDomainProofToken();
      expect(token).to.match(DOMAIN_PROOF_TOKEN);
      expect(newDomainProofToken()).not.to.equal(token);
      const tokenHash = domainProofTokenHash(token);
      expect(tokenHash).to.match(/^[0-9a-f]{64}$/);
      const blob = sealDomainProofToken(token, key, { subscriptionId: SUB, domain: 'example-corp.test' });
      expect(blob).not.to.include(token);
      expect(openDomainProofToken(blob, key, { tokenHash, subscriptionId: SUB, domain: 'example-corp.test' })).to.equal(token);
      expect(() => openDomainProofToken(blob, key, { tokenHash, subscriptionId: 'other-team', domain: 'example-corp.test' })).to.throw(
        /cannot decrypt the domain proof token/,
      );
      expect(() => openDomainProofToken(blob, key, { tokenHash, subscriptionId: SUB, domain: 'other.test' })).to.throw();
    });

    it('is confirmable while pending and unexpired only', () => {
      const now = T0.getTime();
      expect(confirmable({ status: 'pending', expiresAt: at(1) }, now)).to.equal('ok');
      expect(confirmable({ status: 'pending', expiresAt: at(-1) }, now)).to.equal('expired');
      expect(confirmable({ status: 'used', expiresAt: at(1) }, now)).to.equal('used');
      expect(confirmable({ status: 'superseded', expiresAt: at(1) }, now)).to.equal('used');
    });

    it('travels to the mailer sealed and comes out only in the e-mail to the address at the domain, once per proof', () => {
      const token = newDomainProofToken();
      const tokenHash = domainProofTokenHash(token);
      const event = newEvent('team.sso-domain-proof-requested', {
        subscriptionId: SUB,
        proofId: 'proof-1',
        domain: 'example-corp.test',
        address: 'it@example-corp.test',
        tokenHash,
        encryptedToken: sealDomainProofToken(token, key, { subscriptionId: SUB, domain: 'example-corp.test' }),
        expiresAt: at(DAY),
        requestedBy: 'owner',
        requestedByEmail: 'owner@example.test',
      } satisfies TeamSsoDomainProofRequestedData);
      expect(JSON.stringify(event)).not.to.include(token);
      const settings = {
        keyEncryptionKey: key,
        reactivateUrl: 'https://x.test',
        pricingUrl: 'https://x.test',
        consoleUrl: 'https://console.test',
      };
      const owed = owedMail(event, settings)!;
      expect(owed.effect).to.equal('sso-domain-proof-email:proof-1');
      expect(owed.mail.to).to.equal('it@example-corp.test');
      expect(owed.mail.text).to.include(`https://console.test/team/sso/verify?token=${token}`).and.to.include('owner@example.test');
      // Another team's blob pasted into this event does not open.
      const pasted = { ...event, data: { ...event.data, subscriptionId: 'other-team' } };
      expect(() => owedMail(pasted, settings)).to.throw(/cannot decrypt/);
    });
  });

  describe('the workspaces projection', () => {
    const domain = 'example-corp.test';

    it('counts a domain proven only after its pending proof is confirmed; old configurations replay with nothing proven', () => {
      expect(proven([configured([domain], 0)])).to.deep.equal([]);
      expect(proven([configured([domain], 0), requested('p1', domain, 10)])).to.deep.equal([]);
      const doc = replay([configured([domain], 0), requested('p1', domain, 10), verified('p1', domain, 20)]);
      expect(doc.sso?.provenDomains).to.deep.equal([domain]);
      expect(doc.sso?.domains).to.deep.equal([domain]);
      expect(doc.sso?.proofs.map((p) => p.status)).to.deep.equal(['used']);
    });

    it('refuses a verification that does not match: unknown proof, another domain, expired, superseded, used twice, before its request', () => {
      const base = [configured([domain, 'other-corp.test'], 0), requested('p1', domain, 10)];
      expect(proven([...base, verified('nope', domain, 20)])).to.deep.equal([]);
      expect(proven([...base, verified('p1', 'other-corp.test', 20)])).to.deep.equal([]);
      expect(proven([...base, verified('p1', domain, 10 + DAY + 1)])).to.deep.equal([]);
      expect(proven([...base, requested('p2', domain, 15), verified('p1', domain, 20)])).to.deep.equal([]);
      expect(proven([...base, requested('p2', domain, 15), verified('p2', domain, 20)])).to.deep.equal([domain]);
      // Replay order: a verification before its request (or requested for a domain not configured) counts for nothing.
      expect(proven([configured([domain], 0), verified('p1', domain, 5), requested('p1', domain, 10)])).to.deep.equal([]);
      expect(replay([configured(['x-corp.test'], 0), requested('p1', domain, 10), verified('p1', domain, 20)]).sso?.proofs).to.deep.equal(
        [],
      );
      // Used once: the same verification again changes nothing.
      const twice = replay([...base, verified('p1', domain, 20), verified('p1', domain, 21)]);
      expect(twice.sso?.provenDomains).to.deep.equal([domain]);
    });

    it('keeps a proof across a new issuer (the proof is about the domain), drops it with the domain or with SSO removed', () => {
      const provenOnce = [configured([domain, 'other-corp.test'], 0), requested('p1', domain, 10), verified('p1', domain, 20)];
      expect(proven([...provenOnce, configured([domain, 'other-corp.test'], 30, 'https://new-idp.example-corp.test')])).to.deep.equal([
        domain,
      ]);
      expect(proven([...provenOnce, configured(['other-corp.test'], 30)])).to.deep.equal([]);
      // Named again later: it needs a new proof.
      expect(proven([...provenOnce, configured(['other-corp.test'], 30), configured([domain], 40)])).to.deep.equal([]);
      expect(proven([...provenOnce, removed(30), configured([domain], 40)])).to.deep.equal([]);
      // A pending link of a dropped domain is gone too: confirming it after the domain comes back proves nothing.
      const pending = [configured([domain], 0), requested('p1', domain, 10), configured(['other-corp.test'], 20), configured([domain], 30)];
      expect(proven([...pending, verified('p1', domain, 40)])).to.deep.equal([]);
    });

    it('reads the same in a replay as when applied live, event by event', () => {
      const events = [
        configured([domain], 0),
        requested('p1', domain, 10),
        requested('p2', domain, 20),
        verified('p1', domain, 30),
        verified('p2', domain, 40),
        configured([domain, 'b-corp.test'], 50, 'https://other-idp.test'),
        requested('p3', 'b-corp.test', 60),
      ];
      const first = replay(events);
      expect(replay(events)).to.deep.equal(first);
      expect(first.sso?.provenDomains).to.deep.equal([domain]);
      expect(ssoDomainStatuses(first.sso!, at(70).getTime())).to.deep.equal([
        { domain, status: 'proven', proofSentTo: null, proofExpiresAt: null },
        { domain: 'b-corp.test', status: 'pending', proofSentTo: 'it@b-corp.test', proofExpiresAt: at(60 + DAY).toISOString() },
      ]);
      // Past its expiry the link is no longer shown as live; the domain stays pending.
      expect(ssoDomainStatuses(first.sso!, at(60 + DAY + 1).getTime())[1]).to.deep.equal({
        domain: 'b-corp.test',
        status: 'pending',
        proofSentTo: null,
        proofExpiresAt: null,
      });
      expect(JSON.stringify(ssoDomainStatuses(first.sso!))).not.to.include('hash-');
    });
  });
});
