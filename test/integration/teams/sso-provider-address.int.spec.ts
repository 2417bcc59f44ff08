import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { ProviderUnavailable, discoverProvider } from '../../../services/teams/sso-provider.ts';

/**
 * A team's provider is an address its owner typed: outside development it must be a public one, and so
 * must every endpoint its metadata names. A server on loopback stands for the private network here.
 */
describe("team SSO: the provider's address (integration)", () => {
  let server: Server;
  let port: number;
  let hits = 0;

  before(async () => {
    server = createServer((req, res) => {
      hits++;
      const issuer = `http://${req.headers.host}`;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          issuer,
          authorization_endpoint: `${issuer}/auth`,
          // A metadata document naming an internal token endpoint.
          token_endpoint: 'http://10.0.0.1/token',
          jwks_uri: `${issuer}/jwks`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const settings = (issuer: string, allowLocal: boolean) => ({
    issuer,
    clientId: 'svc',
    clientSecret: 'not-a-real-secret-0123456789',
    allowLocal,
  });

  it('refuses a provider on a private or loopback address, by literal or by name, without connecting', async () => {
    hits = 0;
    for (const issuer of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
      const err = await discoverProvider(settings(issuer, false)).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, issuer).to.be.instanceOf(ProviderUnavailable);
      expect((err as Error).message).to.include('it is not at a public address');
      expect((err as Error).message).to.not.include('not-a-real-secret');
    }
    expect(hits, 'no request reached the private server').to.equal(0);
  });

  it('reaches the same provider where local providers are allowed (development and tests)', async () => {
    hits = 0;
    const configuration = await discoverProvider(settings(`http://127.0.0.1:${port}`, true));
    expect(configuration.serverMetadata().token_endpoint).to.equal('http://10.0.0.1/token');
    expect(hits).to.equal(1);
  });
});
