import { expect } from 'chai';
import { connect, type Socket } from 'node:net';
import { ByteBudget } from '../../../services/vision/browser/byte-budget.ts';
import { SocksProxy } from '../../../services/vision/browser/socks-proxy.ts';
import { parseAllowList } from '../../../services/platform/allow-list.ts';
import { SsrfGuard } from '../../../services/vision/browser/ssrf-guard.ts';
import { startFixtureSite, type FixtureSite } from './fixture-site.ts';

/** A SOCKS5 client as Chromium speaks it: no auth, CONNECT by domain name (or IPv4/IPv6 bytes). */
async function socksConnect(proxyPort: number, address: Buffer, port: number): Promise<{ socket: Socket; reply: number }> {
  const socket = connect({ host: '127.0.0.1', port: proxyPort });
  const received: Buffer[] = [];
  const read = (n: number) =>
    new Promise<Buffer>((resolve, reject) => {
      const check = () => {
        const all = Buffer.concat(received);
        if (all.length < n) return false;
        received.length = 0;
        if (all.length > n) received.push(all.subarray(n));
        socket.off('data', onData);
        resolve(all.subarray(0, n));
        return true;
      };
      const onData = (chunk: Buffer) => {
        received.push(chunk);
        check();
      };
      if (!check()) socket.on('data', onData);
      socket.once('error', reject);
    });
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(Buffer.from([5, 1, 0]));
  expect([...(await read(2))]).to.deep.equal([5, 0]);
  const portBytes = Buffer.alloc(2);
  portBytes.writeUInt16BE(port);
  socket.write(Buffer.concat([Buffer.from([5, 1, 0]), address, portBytes]));
  const reply = await read(10);
  return { socket, reply: reply[1] ?? -1 };
}

const domain = (name: string) => Buffer.concat([Buffer.from([3, name.length]), Buffer.from(name, 'latin1')]);
const ipv4 = (a: number, b: number, c: number, d: number) => Buffer.from([1, a, b, c, d]);
const ipv6Loopback = () => Buffer.concat([Buffer.from([4]), Buffer.alloc(15), Buffer.from([1])]);

describe('SOCKS5 egress proxy (integration, no browser)', () => {
  let site: FixtureSite;
  let proxy: SocksProxy;
  let budget: ByteBudget;
  const refused: Array<{ target: string; reason: string }> = [];
  const lookups: string[] = [];

  beforeEach(async () => {
    site = await startFixtureSite();
    budget = new ByteBudget(150_000);
    refused.length = 0;
    lookups.length = 0;
    const guard = new SsrfGuard({
      allowList: parseAllowList(`127.0.0.1:${site.port}`),
      lookup: async (host) => {
        lookups.push(host);
        if (host === 'site.test') return [{ address: '127.0.0.1', family: 4 }];
        if (host === 'evil.test') return [{ address: '169.254.169.254', family: 4 }];
        throw Object.assign(new Error('no such host'), { code: 'ENOTFOUND' });
      },
    });
    proxy = await SocksProxy.start({ guard, budget, onBlocked: (target, reason) => refused.push({ target, reason }) });
  });

  afterEach(async () => {
    await proxy.close();
    await site.close();
  });

  const proxyPort = () => Number(new URL(proxy.url).port);

  it('tunnels to an allowed host by name, through the address the guard vetted', async () => {
    const { socket, reply } = await socksConnect(proxyPort(), domain('site.test'), site.port);
    expect(reply).to.equal(0);
    socket.write(`GET /basic HTTP/1.1\r\nHost: site.test:${site.port}\r\nConnection: close\r\n\r\n`);
    const response = await new Promise<string>((resolve) => {
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
    expect(response)
      .to.match(/^HTTP\/1\.1 200/)
      .and.include('Vision fixture');
    expect(lookups).to.deep.equal(['site.test']);
    expect(budget.used).to.equal(Buffer.byteLength(response));
  });

  it('refuses private targets by literal, by name and by IPv6 form, without connecting', async () => {
    for (const address of [ipv4(127, 0, 0, 1), domain('evil.test'), ipv6Loopback(), domain('localhost'), ipv4(10, 255, 255, 1)]) {
      const { socket, reply } = await socksConnect(proxyPort(), address, site.forbiddenPort);
      expect(reply, String(address)).to.equal(2); // "connection not allowed by ruleset"
      socket.destroy();
    }
    expect(site.forbiddenConnections()).to.equal(0);
    expect(refused.map((r) => r.target)).to.deep.equal([
      `127.0.0.1:${site.forbiddenPort}`,
      `evil.test:${site.forbiddenPort}`,
      `[0:0:0:0:0:0:0:1]:${site.forbiddenPort}`,
      `localhost:${site.forbiddenPort}`,
      `10.255.255.1:${site.forbiddenPort}`,
    ]);
    // The refusal names the host, never the address it resolved to (that would map the network for the asker).
    expect(refused[1]?.reason).to.include('evil.test').and.not.include('169.254.169.254');
  });

  it('cuts the tunnels and refuses new ones once the page weight is spent', async () => {
    const { socket } = await socksConnect(proxyPort(), ipv4(127, 0, 0, 1), site.port);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    for (let i = 0; i < 3; i++) socket.write(`GET /blob/${i} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    await closed;
    expect(budget.exceeded).to.equal(true);
    const after = await socksConnect(proxyPort(), ipv4(127, 0, 0, 1), site.port);
    expect(after.reply).to.equal(2);
    after.socket.destroy();
    expect(refused.at(-1)?.reason).to.equal('page weight limit reached');
  });

  it('answers only SOCKS5 CONNECT', async () => {
    const socket = connect({ host: '127.0.0.1', port: proxyPort() });
    const answer = new Promise<Buffer>((resolve) => socket.once('data', resolve));
    socket.write(Buffer.from([4, 1, 0, 80, 127, 0, 0, 1, 0])); // SOCKS4
    expect([...(await answer)]).to.deep.equal([5, 1]);
    socket.destroy();
  });
});
