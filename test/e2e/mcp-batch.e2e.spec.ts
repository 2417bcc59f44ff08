import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import { keysService } from '../../services/keys/keys.service.ts';
import { MAX_BATCH } from '../../services/mcp/http/mcp.routes.ts';
import { mcpService } from '../../services/mcp/mcp.service.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { eventually, testLogger } from '../support/env.ts';
import { mintKey, retrievalEnv, retrievalPorts } from '../support/retrieval.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { useContractCheck } from '../support/contract-check.ts';

const SHARED_SECRET = 'bc'.repeat(32);

interface RpcAnswer {
  id?: unknown;
  result?: { isError?: boolean; structuredContent?: Record<string, unknown> };
  error?: { code: number; message: string; data?: Record<string, unknown> };
}

interface Posted {
  status: number;
  headers: Headers;
  /** The JSON-RPC answers, whether sent as JSON or as a server-sent event stream. */
  answers: RpcAnswer[];
}

/**
 * JSON-RPC batches on POST /mcp (issue 23 item 6): each message is a request to the gate, so a batch
 * cannot buy many calls for the rate limit of one, and each tool call meters its own use.
 */
describe('MCP batches: one request to the gate per message (e2e)', function () {
  this.timeout(180_000);
  let platform: RunningPlatform;
  let dir: string;
  let keys: string;
  let mcp: string;
  let workspace: string;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const stack = await useStack();
    dir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-mcp-batch-`));
    workspace = join(dir, 'workspace');
    mkdirSync(join(workspace, 'batch'), { recursive: true });
    const ports = await retrievalPorts();
    keys = `http://127.0.0.1:${ports.keys}`;
    mcp = `http://127.0.0.1:${ports.mcp}/mcp`;
    platform = await startServices(
      [keysService, mcpService],
      retrievalEnv(stack, { ports, dir, workspace, sharedSecret: SHARED_SECRET }),
      testLogger(),
    );
  });

  after(async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // Every answer of this spec, checked against the answering face's OpenAPI document.
  useContractCheck();

  const post = async (apiKey: string, body: unknown, headers: Record<string, string> = {}): Promise<Posted> => {
    const res = await fetch(mcp, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': apiKey, ...headers },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    const parsed: unknown[] = (res.headers.get('content-type') ?? '').startsWith('text/event-stream')
      ? text
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => JSON.parse(line.slice('data:'.length)) as unknown)
      : text
        ? [JSON.parse(text) as unknown]
        : [];
    return { status: res.status, headers: res.headers, answers: parsed.flat() as RpcAnswer[] };
  };
  const call = (id: number, name: string, args: Record<string, unknown> = {}) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args },
  });
  const listTools = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list', params: {} });
  const remaining = (posted: Posted) => Number(posted.headers.get('x-ratelimit-remaining'));
  const windowOf = (posted: Posted) => posted.headers.get('x-ratelimit-reset');
  const queriesUsed = async (apiKey: string) =>
    ((await (await fetch(`${keys}/usage`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as { usage: { queries: number } })
      .usage.queries;

  /** A pro key with a collection of one pushed file to query. */
  const keyWithCollection = async (name: string): Promise<string> => {
    const { apiKey } = await mintKey(keys, SHARED_SECRET, 'pro', name);
    const setup = await post(apiKey, call(1, 'rag_setup', { projectPath: join(workspace, 'batch'), collectionName: 'batch' }));
    expect(setup.answers[0]?.result?.isError, JSON.stringify(setup.answers)).to.not.equal(true);
    const files = [{ path: 'lib/greeting.ts', content: 'export function greet(name: string): string {\n  return `hello ${name}`;\n}\n' }];
    const index = await post(apiKey, call(2, 'rag_index', { collectionName: 'batch', files }));
    expect(index.answers[0]?.result?.structuredContent, JSON.stringify(index.answers)).to.include({ status: 'completed' });
    return apiKey;
  };

  it('refuses a batch from a client of a protocol version without batches (2025-06-18 on), before any of it runs', async () => {
    const apiKey = await keyWithCollection('batch-version');
    const before = await queriesUsed(apiKey);
    const batch = [call(1, 'rag_query', { query: 'say hello', collectionName: 'batch' }), listTools(2)];
    for (const version of ['2025-06-18', '2025-11-25']) {
      const refused = await post(apiKey, batch, { 'mcp-protocol-version': version });
      expect(refused.status).to.equal(400);
      expect(refused.answers[0]?.error?.code).to.equal(-32600);
      expect(refused.answers[0]?.error?.message).to.include(version).and.include('batches');
    }
    // The revision that had batches still may send them.
    const allowed = await post(apiKey, batch, { 'mcp-protocol-version': '2025-03-26' });
    expect(allowed.status).to.equal(200);
    expect(allowed.answers.map((a) => a.id).sort()).to.deep.equal([1, 2]);
    // Only the allowed batch's query was metered.
    const used = await eventually('the allowed batch metered', async () => {
      const now = await queriesUsed(apiKey);
      return now >= before + 1 ? now : undefined;
    });
    expect(used).to.equal(before + 1);
  });

  it('counts a batch of K tool calls as K requests against the rate limit, and meters each query', async () => {
    const apiKey = await keyWithCollection('batch-k');
    const before = await queriesUsed(apiKey);
    const K = 5;
    let sent = 0;
    // Measured within one rate window: a window that turns between the two requests starts afresh.
    for (let attempt = 0; ; attempt++) {
      const single = await post(apiKey, listTools(1));
      const batch = await post(
        apiKey,
        Array.from({ length: K }, (_, i) => call(10 + i, 'rag_query', { query: 'say hello', collectionName: 'batch' })),
      );
      sent += K;
      expect(batch.status).to.equal(200);
      expect(batch.answers.map((a) => a.id).sort()).to.deep.equal([10, 11, 12, 13, 14]);
      for (const answer of batch.answers) expect(answer.result?.isError, JSON.stringify(answer)).to.not.equal(true);
      if (windowOf(single) !== windowOf(batch) && attempt < 2) continue;
      expect(remaining(single) - remaining(batch)).to.equal(K);
      break;
    }
    const used = await eventually('each query of the batches metered', async () => {
      const now = await queriesUsed(apiKey);
      return now >= before + sent ? now : undefined;
    });
    expect(used).to.equal(before + sent);
  });

  it('refuses a batch bigger than what is left of the minute with 429, running none of it', async () => {
    const apiKey = await keyWithCollection('batch-over');
    const LEFT = 10;
    // Read first: GET /usage is a request of the key too.
    const before = await queriesUsed(apiKey);
    // Spend the window down to LEFT requests, in batches; again if the window is about to turn.
    let last = await post(apiKey, listTools(1));
    for (;;) {
      while (remaining(last) > LEFT) {
        const size = Math.min(MAX_BATCH, remaining(last) - LEFT);
        const previous = last;
        last = await post(
          apiKey,
          Array.from({ length: size }, (_, i) => listTools(100 + i)),
        );
        expect(last.status).to.equal(200);
        if (windowOf(previous) === windowOf(last)) expect(remaining(previous) - remaining(last), 'what a batch costs').to.equal(size);
      }
      if (Number(windowOf(last)) - Date.now() / 1000 > 10) break;
      last = await post(apiKey, listTools(1)); // the next window, to spend down in turn
    }
    expect(remaining(last)).to.equal(LEFT);

    const refused = await post(
      apiKey,
      Array.from({ length: LEFT + 1 }, (_, i) => call(200 + i, 'rag_query', { query: 'say hello', collectionName: 'batch' })),
    );
    expect(refused.status).to.equal(429);
    expect(refused.answers).to.have.length(1);
    expect(refused.answers[0]).to.deep.include({ id: null }).and.have.nested.property('error.data.code', 'RATE_LIMITED');
    expect(refused.answers[0]!.error!.message).to.match(/batch holds 11 requests/);
    expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
    // The refused batch spent the one request its HTTP request cost, not the rest of the window.
    expect(remaining(refused)).to.equal(LEFT - 1);

    // Nothing of it ran: one more query is metered, and the count moves by that one only (usage
    // events of a key are applied in order, so the batch's would have come before it).
    const one = await post(apiKey, call(300, 'rag_query', { query: 'say hello', collectionName: 'batch' }));
    expect(one.status).to.equal(200);
    const used = await eventually('the single query metered', async () => {
      const now = await queriesUsed(apiKey);
      return now > before ? now : undefined;
    });
    expect(used).to.equal(before + 1);
  });

  it(`refuses a batch of more than ${MAX_BATCH} messages with 400 Invalid Request, running none of it`, async () => {
    const { apiKey } = await mintKey(keys, SHARED_SECRET, 'pro', 'batch-cap');
    const before = await queriesUsed(apiKey);
    const res = await post(
      apiKey,
      Array.from({ length: MAX_BATCH + 1 }, (_, i) => call(i + 1, 'rag_query', { query: 'x', collectionName: 'none' })),
    );
    expect(res.status).to.equal(400);
    expect(res.answers[0]).to.deep.include({ jsonrpc: '2.0', id: null }).and.have.nested.property('error.code', -32600);
    expect(res.answers[0]!.error!.message).to.include(`at most ${MAX_BATCH} messages`);
    const allowed = await post(
      apiKey,
      Array.from({ length: MAX_BATCH }, (_, i) => listTools(i + 1)),
    );
    expect(allowed.status).to.equal(200);
    expect(allowed.answers).to.have.length(MAX_BATCH);
    expect(await queriesUsed(apiKey)).to.equal(before);
  });
});
