import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { BlockedAddress, publicFetch } from '../../../services/platform/public-fetch.ts';

/**
 * The guard for URLs a stranger names (an assistant's client ID metadata document, a team's provider):
 * a server on loopback stands for the private network. Refused by literal and by name, before any
 * byte reaches it; reached only where local addresses are allowed (development and tests).
 */
describe('fetches of addresses a stranger chose (integration)', () => {
  let server: Server;
  let port: number;
  let hits = 0;

  before(async () => {
    server = createServer((_req, res) => {
      hits++;
      res.end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const causes = (err: unknown): unknown[] => {
    const chain: unknown[] = [];
    for (let e: unknown = err; e instanceof Error; e = e.cause) chain.push(e);
    return chain;
  };

  it('refuses loopback, private and link-local addresses, by literal and by a name that resolves to one, without connecting', async () => {
    hits = 0;
    const guarded = publicFetch(false);
    for (const url of [
      `http://127.0.0.1:${port}/client.json`,
      `http://localhost:${port}/client.json`,
      `http://[::1]:${port}/client.json`,
      'http://10.0.0.1/client.json',
      'http://169.254.169.254/latest/meta-data/',
    ]) {
      const err = await guarded(url, { signal: AbortSignal.timeout(5000) }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(
        causes(err).some((e) => e instanceof BlockedAddress),
        `${url}: ${String(err)}`,
      ).to.equal(true);
    }
    expect(hits, 'no request reached the private server').to.equal(0);
  });

  it('reaches a local server where local addresses are allowed', async () => {
    hits = 0;
    const res = await publicFetch(true)(`http://127.0.0.1:${port}/client.json`);
    expect(res.status).to.equal(200);
    expect(hits).to.equal(1);
  });
});
