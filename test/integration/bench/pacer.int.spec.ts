import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { goPacedLoad, pacerBinary } from '../../../bench/go-pacer.ts';
import { type PacedSpec, pacedLoad } from '../../../bench/paced-load.ts';

type Handler = (body: string, n: number, req: IncomingMessage, res: ServerResponse) => void;

/** A local server that reads each body and hands it to `handle`, with its arrival number. */
async function serve(handle: Handler): Promise<{ url: string; bodies: string[]; server: Server }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      bodies.push(body);
      handle(body, bodies.length, req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/validate`, bodies, server };
}

const answer = (res: ServerResponse, status: number, body: string) => {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

const spec = (url: string, over: Partial<PacedSpec> = {}): PacedSpec => ({
  url,
  connections: 4,
  seconds: 1,
  rate: 400,
  requests: ['a', 'b', 'c'].map((k) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiKey: k }) })),
  expectBodyPrefix: '{"valid":true,',
  ...over,
});

describe('bench/pacer: the paced load from Go, by the Node generator’s rules (integration)', function () {
  this.timeout(120_000); // the first run builds the binary (cached after)
  let binary: string;
  const servers: Server[] = [];

  before(() => {
    binary = pacerBinary();
  });

  afterEach(async () => {
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
  });

  it('sends every request due, the bodies in turn, and times each 2xx answer from its release', async () => {
    const target = await serve((_body, _n, _req, res) => answer(res, 200, '{"valid":true,"tier":"team"}'));
    servers.push(target.server);
    const before = Date.now();
    const r = await goPacedLoad(binary, spec(target.url));
    const after = Date.now();
    expect(r).to.include({ completed: 400, mismatches: 0, errors: 0, timeouts: 0 });
    expect(r.statusCodes).to.deep.equal({ '200': 400 });
    expect(target.bodies).to.have.length(400);
    // In turn: 400 requests over three bodies (the server sees them in the order its sockets wake).
    const perBody = new Map<string, number>();
    for (const b of target.bodies) perBody.set(b, (perBody.get(b) ?? 0) + 1);
    expect(Object.fromEntries(perBody)).to.deep.equal({ '{"apiKey":"a"}': 134, '{"apiKey":"b"}': 133, '{"apiKey":"c"}': 133 });
    expect(r.latenciesMs).to.have.length(400);
    expect(r.releasedAtMs).to.have.length(400);
    for (const ms of r.latenciesMs)
      expect(ms)
        .to.be.greaterThan(0)
        .and.lessThan(after - before);
    for (const at of r.releasedAtMs) expect(at).to.be.within(before, after);
    // Released over the second it was asked for, not at once.
    const released = Array.from(r.releasedAtMs).sort((a, b) => a - b);
    expect(released.at(-1)! - released[0]!).to.be.within(900, 1200);
    expect(r.seconds).to.be.within(0.99, 3);
    expect(r.cpuMs).to.be.greaterThan(0);
  });

  it('counts statuses and bodies as the Node generator does, and times only 2xx answers', async () => {
    const target = await serve((_body, n, _req, res) => {
      if (n % 5 === 0) answer(res, 429, '{"error":"rate_limited"}');
      else if (n % 7 === 0) answer(res, 200, '{"valid":false,"reason":"NOT_FOUND"}');
      else answer(res, 200, '{"valid":true}'.replace('}', ',"x":1}'));
    });
    servers.push(target.server);
    const go = await goPacedLoad(binary, spec(target.url, { connections: 1 }));
    target.bodies.length = 0;
    const node = await pacedLoad(spec(target.url, { connections: 1 }));
    for (const r of [go, node]) {
      expect(r.statusCodes).to.deep.equal({ '200': 320, '429': 80 });
      // Every 7th arrival that is not also a 5th: 57 of 400 minus the 11 that are both.
      expect(r.mismatches).to.equal(46);
      expect(r.completed).to.equal(320);
      expect(r.errors).to.equal(0);
      expect(r.timeouts).to.equal(0);
    }
  });

  it('counts requests never answered as timeouts once the grace after the last is over', async () => {
    const target = await serve((_body, n, _req, res) => {
      if (n <= 50) answer(res, 200, '{"valid":true,"n":1}'); // then silent
    });
    servers.push(target.server);
    const r = await goPacedLoad(binary, spec(target.url, { rate: 200 }), 1);
    expect(r.completed).to.equal(50);
    // 200 due: 50 answered, 4 sent and unanswered (one per connection), 146 still queued.
    expect(r.timeouts).to.equal(150);
    expect(r.errors).to.equal(0);
    expect(r.seconds).to.be.within(1.9, 4);
  });

  it('takes a connection the server closes out of service, counts the error, and carries on with the rest', async () => {
    const target = await serve((_body, n, req, res) => {
      if (n === 10) req.socket.destroy();
      else answer(res, 200, '{"valid":true,"n":1}');
    });
    servers.push(target.server);
    const r = await goPacedLoad(binary, spec(target.url));
    expect(r.errors).to.equal(1);
    expect(r.completed).to.equal(399);
    expect(r.timeouts).to.equal(0);
  });

  it('fails with the reason when it cannot connect', async () => {
    const target = await serve(() => undefined);
    const url = target.url;
    await new Promise((resolve) => target.server.close(resolve));
    let failure: unknown;
    await goPacedLoad(binary, spec(url)).catch((e: unknown) => (failure = e));
    expect(String(failure)).to.match(/bench\/pacer exited 1: pacer: connecting to 127\.0\.0\.1:\d+: connection refused/);
  });
});
