import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { freePort } from '../../deploy/local/processes.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { mcpService } from '../../services/mcp/mcp.service.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { ragService } from '../../services/vision-rag/vision-rag.service.ts';
import { testLogger } from '../support/env.ts';
import { mintKey, retrievalEnv, retrievalPorts } from '../support/retrieval.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { useContractCheck } from '../support/contract-check.ts';

const SHARED_SECRET = 'ab'.repeat(32);

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Resolves when the server closes its side of the connection (FIN), rejects on a reset. */
  closed: Promise<void>;
}

/**
 * Sends a request head and only `bodyStart` of the body the head announces, and reads the answer as
 * it comes: a server that waits for the rest of the body never answers, and the deadline fails the test.
 */
function partialRequest(port: number, head: string, bodyStart: Buffer, deadlineMs: number): Promise<RawAnswer & { socket: Socket }> {
  return new Promise((resolveAnswer, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    let answered = false;
    let resolveClosed!: () => void;
    let rejectClosed!: (err: Error) => void;
    const closed = new Promise<void>((res, rej) => ((resolveClosed = res), (rejectClosed = rej)));
    closed.catch(() => undefined);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${deadlineMs} ms (${received.length} bytes received)`));
    }, deadlineMs);
    socket.on('connect', () => socket.write(Buffer.concat([Buffer.from(head, 'latin1'), bodyStart])));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (answered) return;
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine, ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      const length = Number(headers['content-length'] ?? NaN);
      if (!Number.isFinite(length) || received.length < end + 4 + length) return;
      answered = true;
      clearTimeout(timer);
      resolveAnswer({
        status: Number(statusLine!.split(' ')[1]),
        headers,
        body: received.subarray(end + 4, end + 4 + length).toString('utf8'),
        closed,
        socket,
      });
    });
    socket.on('end', () => resolveClosed());
    socket.on('error', (err) => {
      rejectClosed(err);
      if (!answered) {
        clearTimeout(timer);
        reject(err);
      }
    });
  });
}

/**
 * The rag face asks for the key before it reads a body (issue 23 item 8), and /metrics is served on
 * the process's private listener only (item 9a).
 */
describe('gate first, metrics private: what an anonymous caller can make the rag and mcp faces do (e2e)', function () {
  this.timeout(120_000);
  let platform: RunningPlatform;
  let dir: string;
  let rag: string;
  let ragPort: number;
  let mcp: string;
  let ops: string;
  let keys: string;
  let apiKey: string;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const stack = await useStack();
    dir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-gate-first-`));
    const workspace = join(dir, 'workspace');
    mkdirSync(workspace, { recursive: true });
    const ports = await retrievalPorts();
    const opsPort = await freePort();
    ragPort = ports.rag;
    rag = `http://127.0.0.1:${ports.rag}`;
    mcp = `http://127.0.0.1:${ports.mcp}`;
    ops = `http://127.0.0.1:${opsPort}`;
    keys = `http://127.0.0.1:${ports.keys}`;
    platform = await startServices(
      [keysService, ragService, mcpService],
      retrievalEnv(
        stack,
        { ports, dir, workspace, sharedSecret: SHARED_SECRET },
        { OPS_PORT: String(opsPort), RAG_PUSH_BODY_LIMIT: '10mb' },
      ),
      testLogger(),
    );
    apiKey = (await mintKey(`http://127.0.0.1:${ports.keys}`, SHARED_SECRET, 'pro', 'gate-first')).apiKey;
  });

  after(async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // Every answer of this spec, checked against the answering face's OpenAPI document.
  useContractCheck();

  const head = (path: string, length: number, extra = '') =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${ragPort}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`;

  it('answers a request without a key 401 at once, though its 10 MB body has not come, and still closes the connection gracefully', async () => {
    for (const path of ['/api/rag/index', '/api/rag/query', '/api/glm/capture', '/api/integration/validate']) {
      // The old face waited for the 10 MB to parse them, and so never answered this request.
      const answer = await partialRequest(ragPort, head(path, 10_000_000), Buffer.from('{"collectionName":"x","files":['), 5000);
      expect(answer.status, path).to.equal(401);
      expect(JSON.parse(answer.body), path).to.include({ success: false, code: 'UNAUTHORIZED' });
      // The rest of the body is read and thrown away, and the connection closed without a reset.
      answer.socket.write(Buffer.alloc(64 * 1024, 0x20));
      await answer.closed;
    }
  });

  it('answers a gzip bomb without a key 401, without inflating it; with a key, 413 as before', async () => {
    const bomb = gzipSync(
      Buffer.concat([Buffer.from('{"collectionName":"x","pad":"'), Buffer.alloc(100 * 1024 * 1024, 0x61), Buffer.from('"}')]),
      { level: 9 },
    );
    expect(bomb.length).to.be.below(1024 * 1024);
    const post = (headers: Record<string, string>) =>
      fetch(`${rag}/api/rag/index`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', ...headers },
        body: bomb,
      });
    const anonymous = await post({});
    expect(anonymous.status).to.equal(401);
    expect(await anonymous.json()).to.include({ success: false, code: 'UNAUTHORIZED' });
    const keyed = await post({ 'x-api-key': apiKey });
    expect(keyed.status).to.equal(413);
    expect(await keyed.json()).to.include({ success: false, code: 'PAYLOAD_TOO_LARGE' });
  });

  it('still reads the body of an admitted request, gzip or not, once', async () => {
    const body = JSON.stringify({ query: 'anything', collectionName: 'none-here' });
    for (const [encoding, bytes] of [
      ['identity', Buffer.from(body)],
      ['gzip', gzipSync(body)],
    ] as const) {
      const res = await fetch(`${rag}/api/rag/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': encoding, 'x-api-key': apiKey },
        body: bytes,
      });
      // The body was read: the operation looked for the collection it names.
      expect(res.status, encoding).to.equal(404);
      expect(await res.json(), encoding).to.include({ success: false });
    }
    const malformed = await fetch(`${rag}/api/rag/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: '{"projectPath":',
    });
    expect(malformed.status).to.equal(400);
    expect(await malformed.json()).to.include({ success: false, code: 'MALFORMED_JSON' });
    // Admitted once: the route's own check did not count the request a second time.
    const first = await fetch(`${rag}/api/rag/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body,
    });
    const second = await fetch(`${rag}/api/rag/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body,
    });
    expect(Number(first.headers.get('x-ratelimit-remaining')) - Number(second.headers.get('x-ratelimit-remaining'))).to.equal(1);
  });

  it('serves /metrics on the private OPS_PORT only: the public rag and mcp faces answer 404', async () => {
    for (const face of [rag, mcp]) {
      const res = await fetch(`${face}/metrics`);
      expect(res.status, face).to.equal(404);
      expect(await res.text(), face).to.not.include('svc_http_request_duration_seconds');
    }
    const scraped = await fetch(`${ops}/metrics`);
    expect(scraped.status).to.equal(200);
    // The whole process's registry: the rag face's requests above are there.
    expect(await scraped.text()).to.match(/svc_http_request_duration_seconds_bucket\{[^}]*service="rag"/);
  });

  it('counts a refused /validate by its code on /metrics, and reports each DLQ depth from Kafka', async () => {
    const scrape = async () => (await fetch(`${ops}/metrics`)).text();
    const countOf = (text: string, code: string) =>
      Number(new RegExp(`^svc_key_validations_total\\{code="${code}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
    const before = await scrape();
    const refused = await fetch(`${keys}/validate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiKey: `svc_${'0'.repeat(33)}` }),
    });
    const { code } = (await refused.json()) as { code: string };
    expect(code).to.be.oneOf(['NOT_FOUND', 'MALFORMED']);
    const after = await scrape();
    expect(countOf(after, code) - countOf(before, code)).to.equal(1);
    // Read from the topics' watermarks: a number for every topic of the catalog, the key never a label.
    expect(after).to.match(/^svc_dlq_depth\{topic="[^"]*keys\.events"\} \d+$/m);
    expect(after).to.not.include(apiKey);
  });
});
