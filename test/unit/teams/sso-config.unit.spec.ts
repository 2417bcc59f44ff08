import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { isHostname, issuerProblem, ssoConfigInput } from '../../../services/teams/sso-config-input.ts';
import { ClientSecretDecryptionError, openClientSecret, sealClientSecret } from '../../../services/teams/sso-secret.ts';

describe('team SSO configuration: the input (unit)', () => {
  const valid = {
    subscriptionId: 'sub-1',
    issuer: 'https://idp.acme.test',
    clientId: 'svc',
    clientSecret: 's3cret',
    domains: ['ACME.test', 'acme.test', 'Labs.Acme.Test'],
  };

  it('takes an https issuer, lower-cases and de-duplicates the domains', () => {
    const parsed = ssoConfigInput(false).parse(valid);
    expect(parsed.domains).to.deep.equal(['acme.test', 'labs.acme.test']);
    expect(parsed.issuer).to.equal('https://idp.acme.test');
  });

  it('refuses plain http unless the deployment allows local issuers', () => {
    const http = { ...valid, issuer: 'http://127.0.0.1:4000' };
    const refused = ssoConfigInput(false).safeParse(http);
    expect(refused.success).to.equal(false);
    expect(refused.error?.issues[0]?.message).to.equal('issuer must be an https URL');
    expect(ssoConfigInput(true).safeParse(http).success).to.equal(true);
  });

  it('refuses issuers that are not plain URLs', () => {
    expect(issuerProblem('idp.acme.test', true)).to.equal('issuer must be an absolute URL');
    expect(issuerProblem('ftp://idp.acme.test', true)).to.equal('issuer must be an http or https URL');
    expect(issuerProblem('https://u:p@idp.acme.test', false)).to.equal('issuer must not carry credentials');
    expect(issuerProblem('https://idp.acme.test/?x=1', false)).to.equal('issuer must not have a query or a fragment');
    expect(issuerProblem('https://idp.acme.test/realms/acme', false)).to.equal(null);
  });

  it('wants 1 to 10 domains, each a host name', () => {
    const problem = (domains: unknown) => ssoConfigInput(false).safeParse({ ...valid, domains }).error?.issues[0]?.message;
    expect(problem([])).to.equal('domains must name at least one e-mail domain');
    expect(problem(Array.from({ length: 11 }, (_, i) => `d${i}.test`))).to.equal('domains may name at most 10 e-mail domains');
    expect(problem(['acme'])).to.match(/"acme" is not an e-mail domain/);
    expect(problem('acme.test')).to.equal('domains must be a list of e-mail domains');
    for (const ok of ['acme.test', 'eu.acme.com', 'xn--bcher-kva.example', 'a-b.co']) expect(isHostname(ok), ok).to.equal(true);
    for (const bad of [
      'acme',
      '-acme.test',
      'acme-.test',
      'ac_me.test',
      'acme.test.',
      '10.0.0.1',
      'acme.test:443',
      `${'a'.repeat(64)}.test`,
      'a b.test',
    ])
      expect(isHostname(bad), bad).to.equal(false);
  });

  it('never repeats the client secret in a problem', () => {
    const parsed = ssoConfigInput(false).safeParse({ ...valid, clientSecret: 'x'.repeat(2000) });
    expect(parsed.error?.issues[0]?.message).to.equal('clientSecret is too long');
  });
});

describe('team SSO configuration: the sealed client secret (unit)', () => {
  const key = randomBytes(32);

  it('opens for its own subscription only, and holds nothing of the secret in clear', () => {
    const sealed = sealClientSecret('the-client-secret', key, 'sub-1');
    expect(sealed).not.to.include('the-client-secret');
    expect(sealed).to.match(/^[A-Za-z0-9+/]+={0,2}$/);
    expect(openClientSecret(sealed, key, 'sub-1')).to.equal('the-client-secret');
    expect(() => openClientSecret(sealed, key, 'sub-2')).to.throw(ClientSecretDecryptionError);
    expect(() => openClientSecret(sealed, randomBytes(32), 'sub-1')).to.throw(ClientSecretDecryptionError);
    expect(() => openClientSecret('not base64!', key, 'sub-1')).to.throw(ClientSecretDecryptionError, /not base64/);
  });

  it('says why it failed without the blob', () => {
    const sealed = sealClientSecret('the-client-secret', key, 'sub-1');
    try {
      openClientSecret(sealed, key, 'sub-2');
      expect.fail('opened for another subscription');
    } catch (err) {
      expect((err as Error).message).not.to.include(sealed);
    }
  });
});
