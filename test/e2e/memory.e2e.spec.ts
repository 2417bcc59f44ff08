import { mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { expect } from 'chai';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { mcpService } from '../../services/mcp/mcp.service.ts';
import { ragService } from '../../services/vision-rag/vision-rag.service.ts';
import { useContractCheck } from '../support/contract-check.ts';
import { testLogger } from '../support/env.ts';
import { mintKey, retrievalEnv, retrievalPorts, type MintedKey } from '../support/retrieval.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';

const SHARED_SECRET = 'fa'.repeat(32);

interface Note {
  id: string;
  text: string;
  tags: string[];
  createdAt: string;
  author: string;
}
interface ToolAnswer {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
}

const NOTES = [
  { text: 'Feature flags are named after the owning squad, then the feature: payments.new-checkout.', tags: ['conventions'] },
  { text: 'We never retry a refund automatically: finance reconciles refunds by hand every Monday.', tags: ['billing'] },
  { text: 'The staging database is reset every night at 02:00 UTC, so tests must seed their own data.', tags: ['testing'] },
];

/**
 * The team's shared memory (issue 29, part 4) end to end: notes stored, listed and searched over HTTP
 * and as MCP tools, with the same retrieval as code (real index, real embedding model); another team
 * sees none of them, a pro key is refused, and the notes' collection is nobody's to list or name.
 */
describe('shared memory: the team notes over HTTP and MCP (e2e)', function () {
  this.timeout(180_000);
  let platform: RunningPlatform;
  let dir: string;
  let rag: string;
  let mcp: string;
  let team: MintedKey;
  let rival: MintedKey;
  let pro: MintedKey;
  const stored: Note[] = [];
  const clients: Client[] = [];

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const stack = await useStack();
    dir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-memory-`));
    const ports = await retrievalPorts();
    rag = `http://127.0.0.1:${ports.rag}`;
    mcp = `http://127.0.0.1:${ports.mcp}/mcp`;
    platform = await startServices(
      [keysService, ragService, mcpService],
      retrievalEnv(stack, { ports, dir, workspace: dir, sharedSecret: SHARED_SECRET }, { RAG_PUBLIC_URL: rag }),
      testLogger(),
    );
    const keys = `http://127.0.0.1:${ports.keys}`;
    team = await mintKey(keys, SHARED_SECRET, 'team', 'memory-team');
    rival = await mintKey(keys, SHARED_SECRET, 'team', 'memory-rival');
    pro = await mintKey(keys, SHARED_SECRET, 'pro', 'memory-pro');
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  useContractCheck();

  async function call(method: string, path: string, key: string, body?: unknown) {
    const res = await fetch(`${rag}${path}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as Record<string, unknown> };
  }

  it('stores notes, each searchable when the answer comes', async () => {
    for (const note of NOTES) {
      const res = await call('POST', '/api/memory/notes', team.apiKey, note);
      expect(res.status, res.text).to.equal(201);
      expect(res.body.searchable).to.equal(true);
      const saved = res.body.note as Note;
      expect(saved).to.include({ text: note.text });
      expect(saved.tags).to.deep.equal(note.tags);
      // The team's key by its last four (a member's own key would name the member's account).
      expect(saved.author).to.equal(`key:…${team.apiKey.slice(-4)}`);
      stored.push(saved);
    }
  });

  it('finds a note by what it means, with the retrieval used for code', async () => {
    const cases = [
      ['how should I name a feature toggle?', 0],
      ['are refunds retried on their own?', 1],
      ['when is the test environment wiped?', 2],
    ] as const;
    for (const [query, expected] of cases) {
      const res = await call('POST', '/api/memory/search', team.apiKey, { query, topK: 3 });
      expect(res.status, res.text).to.equal(200);
      const results = res.body.results as Array<{ note: Note; score: number }>;
      expect(results[0]?.note.id, `${query}: ${JSON.stringify(results.map((r) => r.note.text))}`).to.equal(stored[expected]!.id);
      expect(new Set(results.map((r) => r.note.id)).size).to.equal(results.length);
    }
  });

  it('lists the notes newest first, a page at a time', async () => {
    const first = await call('GET', '/api/memory/notes?limit=2', team.apiKey);
    expect(first.status, first.text).to.equal(200);
    const page1 = first.body.notes as Note[];
    expect(page1.map((n) => n.id)).to.deep.equal([stored[2]!.id, stored[1]!.id]);
    const second = await call('GET', `/api/memory/notes?limit=2&before=${first.body.next as string}`, team.apiKey);
    expect((second.body.notes as Note[]).map((n) => n.id)).to.deep.equal([stored[0]!.id]);
    expect(second.body.next).to.equal(null);
    expect((await call('GET', '/api/memory/notes?before=../../etc', team.apiKey)).status).to.equal(400);
  });

  it("shows another team none of it, refuses a pro key, and keeps the notes' collection out of every list", async () => {
    const theirs = await call('GET', '/api/memory/notes', rival.apiKey);
    expect(theirs.body.notes).to.deep.equal([]);
    const search = await call('POST', '/api/memory/search', rival.apiKey, { query: 'feature flags' });
    expect(search.body.results).to.deep.equal([]);

    const refused = await call('POST', '/api/memory/notes', pro.apiKey, { text: 'x' });
    expect(refused.status).to.equal(403);
    expect(refused.body).to.include({ code: 'FORBIDDEN', error: 'shared memory is part of the team tier' });
    expect((await call('POST', '/api/memory/search', pro.apiKey, { query: 'x' })).status).to.equal(403);

    const collections = await call('GET', '/api/rag/collections', team.apiKey);
    expect(collections.body.collections).to.deep.equal([]);
    const named = await call('POST', '/api/rag/query', team.apiKey, { query: 'refunds', collectionName: '.memory' });
    expect(named.status).to.equal(400);
    expect((await call('POST', '/api/memory/notes', team.apiKey, { text: '' })).status).to.equal(400);
    expect((await call('POST', '/api/memory/notes', team.apiKey, { text: 'x'.repeat(4001) })).status).to.equal(400);
  });

  it('offers the same as MCP tools: memory_store, memory_search, memory_list', async () => {
    const client = new Client({ name: 'memory-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcp), { requestInit: { headers: { 'x-api-key': team.apiKey } } }));
    clients.push(client);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).to.include.members(['memory_store', 'memory_search', 'memory_list']);
    const storedByTool = (await client.callTool({
      name: 'memory_store',
      arguments: { text: 'Customer e-mails go out from the mailer service only, never from a route.', tags: ['email'] },
    })) as ToolAnswer;
    expect(storedByTool.isError, JSON.stringify(storedByTool)).to.not.equal(true);
    const id = (storedByTool.structuredContent?.note as Note | undefined)?.id;
    expect(id).to.be.a('string');
    const found = (await client.callTool({ name: 'memory_search', arguments: { query: 'who sends mail to customers?' } })) as ToolAnswer;
    expect(((found.structuredContent?.results as Array<{ note: Note }>) ?? [])[0]?.note.id).to.equal(id);
    const listed = (await client.callTool({ name: 'memory_list', arguments: { limit: 1 } })) as ToolAnswer;
    expect(listed.content[0]?.text).to.include(id);
  });
});
