import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Client, SdkHttpError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { expect } from 'chai';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { mcpService } from '../../services/mcp/mcp.service.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { ragService } from '../../services/vision-rag/vision-rag.service.ts';
import { eventually, testLogger } from '../support/env.ts';
import { mintKey, retrievalEnv, retrievalPorts, type MintedKey } from '../support/retrieval.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { useContractCheck } from '../support/contract-check.ts';
import { windowWithRoom } from '../support/rate-windows.ts';

const SHARED_SECRET = 'ef'.repeat(32);
const PRICING_URL = 'https://svc.example/pricing';
const FIXTURE = resolve('test/fixtures/rag-repo');
const TOOLS = [
  'rag_setup',
  'rag_index',
  'rag_index_status',
  'rag_query',
  'memory_store',
  'memory_list',
  'memory_search',
  'glm_capture',
  'glm_analyze',
  'glm_test',
  'glm_run',
  'glm_review',
  'integration_validate',
  'integration_generate',
  'integration_report',
  'health_check',
  'api_info',
];
const run = promisify(execFile);

interface ToolAnswer {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
}

/** The MCP server end to end, with the SDK's own client: tools, the gate, metering, isolation, stdio. */
describe('gated MCP server: the vision RAG operations as MCP tools (e2e)', function () {
  this.timeout(180_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let dir: string;
  let workspace: string;
  let keys: string;
  let rag: string;
  let mcp: string;
  const minted: Record<string, MintedKey> = {};
  const clients: Client[] = [];

  const mint = (tier: 'free' | 'pro' | 'team', name: string): Promise<MintedKey> => mintKey(keys, SHARED_SECRET, tier, name);

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    dir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-mcp-`));
    workspace = join(dir, 'workspace');
    mkdirSync(workspace, { recursive: true });
    cpSync(FIXTURE, join(workspace, 'shop'), { recursive: true });
    const ports = await retrievalPorts();
    keys = `http://127.0.0.1:${ports.keys}`;
    rag = `http://127.0.0.1:${ports.rag}`;
    mcp = `http://127.0.0.1:${ports.mcp}/mcp`;
    platform = await startServices(
      // The HTTP face and the MCP face in one process over one engine, as `svc start` runs them.
      [keysService, ragService, mcpService],
      retrievalEnv(
        stack,
        { ports, dir, workspace, sharedSecret: SHARED_SECRET },
        { PRICING_URL, RAG_PUSH_MAX_FILES: '20', RAG_MAX_FILE_BYTES: '20000' },
      ),
      testLogger(),
    );
    for (const [name, tier] of [
      ['acme', 'pro'],
      ['globex', 'team'],
      ['free', 'free'],
      ['free2', 'free'],
    ] as const)
      minted[name] = await mint(tier, name);
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // Every answer of this spec, checked against the answering face's OpenAPI document.
  useContractCheck();

  const connect = async (apiKey: string, options: { modern?: boolean } = {}): Promise<Client> => {
    const client = new Client({ name: 'mcp-e2e', version: '1.0.0' }, options.modern ? { versionNegotiation: { mode: 'auto' } } : {});
    await client.connect(new StreamableHTTPClientTransport(new URL(mcp), { requestInit: { headers: { 'x-api-key': apiKey } } }));
    clients.push(client);
    return client;
  };
  const callTool = async (client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> =>
    (await client.callTool({ name, arguments: args })) as ToolAnswer;
  const text = (answer: ToolAnswer): string => answer.content.map((c) => c.text ?? '').join('\n');
  const usage = async (apiKey: string) =>
    ((await (await fetch(`${keys}/usage`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as { usage: Record<string, number> })
      .usage;
  /** A raw MCP request, to see the gate's HTTP answers before any MCP handling. */
  const raw = (method: string, headers: Record<string, string> = {}) =>
    fetch(mcp, {
      method,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      ...(method === 'POST' ? { body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) } : {}),
    });

  it('lists exactly the tools whose operations exist, with described schemas, in both protocol eras', async () => {
    for (const modern of [false, true]) {
      const client = await connect(minted.acme!.apiKey, { modern });
      const { tools } = await client.listTools();
      expect(
        tools.map((t) => t.name),
        modern ? 'modern era' : 'legacy era',
      ).to.deep.equal(TOOLS);
      for (const tool of tools) {
        expect(tool.description, tool.name).to.be.a('string').with.length.greaterThan(40);
        expect(tool.inputSchema.type).to.equal('object');
        expect(tool.outputSchema?.type, tool.name).to.equal('object');
        for (const [property, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
          expect((schema as { description?: string }).description, `${tool.name}.${property}`).to.be.a('string').that.is.not.empty;
        }
      }
      const query = tools.find((t) => t.name === 'rag_query')!;
      expect(query.inputSchema.required).to.have.members(['query', 'collectionName']);
      expect(query.annotations).to.include({ readOnlyHint: true });
      expect(client.getInstructions()).to.match(/rag_query/);
    }
  });

  // Found by npm run fuzz: the SDK's recursive validation overflowed its stack and answered 500.
  it('answers a message nested 5,000 levels deep with 400 Invalid Request, and the next request normally', async () => {
    const deep = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`;
    const res = await fetch(mcp, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': minted.acme!.apiKey },
      body: deep,
    });
    expect(res.status).to.equal(400);
    expect(await res.json())
      .to.deep.include({ jsonrpc: '2.0', id: null })
      .and.have.nested.property('error.code', -32600);
    const client = await connect(minted.acme!.apiKey);
    expect((await client.listTools()).tools.map((t) => t.name)).to.deep.equal(TOOLS);
  });

  // Found by npm run fuzz: each of these made the SDK answer 500.
  it('answers a body that is not JSON-RPC 2.0, a duplicated Mcp-Session-Id and a non-JSON type with a 4xx', async () => {
    const url = new URL(mcp);
    const post = (body: string, headers: [string, string][] = [['content-type', 'application/json']], path = url.pathname) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          { host: url.hostname, port: url.port, path, method: 'POST', setHost: !headers.some(([n]) => n === 'host') },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        for (const [name, value] of [...headers, ['accept', 'application/json, text/event-stream'], ['x-api-key', minted.acme!.apiKey]] as [
          string,
          string,
        ][]) {
          req.appendHeader(name, value);
        }
        req.on('error', reject);
        req.end(body);
      });
    expect(await post('1.8885783587635846e+24')).to.equal(400);
    expect(await post('{"jsonrpc":"1.0","id":1,"method":"ping"}')).to.equal(400);
    expect(
      await post(
        '[{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{}},{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{}}]',
      ),
    ).to.equal(400);
    expect(
      await post('{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}', [
        ['content-type', 'application/json'],
        ['mcp-session-id', 'x'],
        ['mcp-session-id', 'x'],
      ]),
    ).to.equal(400);
    expect(
      await post('{"jsonrpc":"2.0","id":1,"method":"ping"}', [
        ['content-type', 'text/plain'],
        ['content-type', 'application/json'],
      ]),
    ).to.equal(415);
    expect(await post('{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}', [['content-type', 'application/json;;;']])).to.equal(200);
    expect(await post('{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}')).to.equal(200);
    // An absolute-form target and a Host that is no authority: the SDK's adapter could not build its URL.
    expect(
      await post(
        '{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}',
        [['content-type', 'application/json']],
        `http://127.0.0.1${url.pathname}`,
      ),
    ).to.equal(200);
    expect(
      await post('{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}', [
        ['content-type', 'application/json'],
        ['host', 'no host/here'],
      ]),
    ).to.equal(200);
    // An id is a string, a number or null; echoing an object id 5,000 levels deep overflowed the stack.
    expect(await post(`{"jsonrpc":"2.0","id":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)},"method":"prompts/list"}`)).to.equal(400);
    const rpc = async (body: unknown) => {
      const res = await fetch(mcp, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': minted.acme!.apiKey },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as { id: unknown; error?: { code: number } } };
    };
    expect(await rpc({ jsonrpc: '2.0', id: 3, method: 'prompts/list', params: {} })).to.deep.equal({
      status: 200,
      body: { jsonrpc: '2.0', id: 3, error: { code: -32601, message: 'Method not found: prompts/list' } },
    });
    const init = await rpc({ jsonrpc: '2.0', id: 4, method: 'initialize', params: {} });
    expect(init.status).to.equal(200);
    expect(init.body.error?.code).to.equal(-32602);
  });

  // Found by npm run fuzz: the SDK answered methods other than its own with a 500.
  it('answers methods the transport does not have with 405 and Allow, keyed or not', async () => {
    for (const method of ['PUT', 'PATCH', 'OPTIONS', 'PROPFIND']) {
      for (const headers of [{}, { 'x-api-key': minted.acme!.apiKey }]) {
        const res = await fetch(mcp, {
          method,
          headers: { 'content-type': 'application/json', ...headers },
          ...(method === 'PUT' || method === 'PATCH' ? { body: '{}' } : {}),
        });
        expect(res.status, method).to.equal(405);
        expect(res.headers.get('allow')).to.equal('POST, GET, DELETE');
      }
    }
  });

  it('gates every request before MCP handling: 401, 403 invalid with upgrade, 403 subscription required, 429 with the headers', async () => {
    for (const method of ['POST', 'GET', 'DELETE']) {
      const none = await raw(method);
      expect(none.status, `${method} without a key`).to.equal(401);
      expect(await none.json())
        .to.have.property('error')
        .that.is.a('string');
      const invalid = await raw(method, { 'x-api-key': `svc_${'Z'.repeat(33)}` });
      expect(invalid.status, `${method} with an unknown key`).to.equal(403);
      expect(await invalid.json()).to.include({ code: 'NOT_FOUND', upgrade: PRICING_URL });
      const free = await raw(method, { 'x-api-key': minted.free!.apiKey });
      expect(free.status, `${method} with a free key`).to.equal(403);
      expect(await free.json()).to.include({ error: 'subscription required', upgrade: PRICING_URL });
    }
    // The key as a bearer token works too; a stateless server answers the 2025 session stream 405.
    expect((await raw('POST', { authorization: `Bearer ${minted.acme!.apiKey}` })).status).to.equal(200);
    expect((await raw('GET', { 'x-api-key': minted.acme!.apiKey })).status).to.equal(405);

    let last: Response | undefined;
    // Key limits count in fixed minute windows: 61 requests across a window's end are two windows' worth.
    await windowWithRoom(60, 15_000);
    for (let i = 0; i < 61; i++) last = await raw('POST', { 'x-api-key': minted.free2!.apiKey });
    expect(last!.status).to.equal(429);
    expect(await last!.json()).to.include({ code: 'RATE_LIMITED' });
    expect(last!.headers.get('x-ratelimit-limit')).to.equal('60');
    expect(last!.headers.get('retry-after')).to.match(/^\d+$/);
  });

  it('calls each tool: sets up, indexes a folder, follows the job, finds the right code, and meters it as the HTTP face does', async () => {
    const client = await connect(minted.acme!.apiKey);
    const before = await usage(minted.acme!.apiKey);

    const setup = await callTool(client, 'rag_setup', { projectPath: join(workspace, 'shop'), collectionName: 'shop' });
    expect(setup.isError, text(setup)).to.not.equal(true);
    expect(setup.structuredContent).to.include({
      success: true,
      projectPath: join(workspace, 'shop'),
      collectionName: 'shop',
      vectorDB: 'local',
    });

    const index = await callTool(client, 'rag_index', { collectionName: 'shop' });
    expect(index.structuredContent, text(index)).to.include({
      success: true,
      status: 'completed',
      collectionName: 'shop',
      filesUnchanged: 0,
    });
    const filesIndexed = Number(index.structuredContent!.filesIndexed);
    expect(filesIndexed).to.be.greaterThan(2);
    expect(text(index)).to.match(/completed/);

    const status = await callTool(client, 'rag_index_status', { jobId: index.structuredContent!.jobId });
    expect(status.structuredContent).to.include({ jobId: index.structuredContent!.jobId, status: 'completed', filesIndexed });

    const answer = await callTool(client, 'rag_query', {
      query: 'where are failed calls tried again with growing waits',
      collectionName: 'shop',
      topK: 5,
    });
    const results = answer.structuredContent!.results as {
      metadata: { file: string; symbol?: string; startLine: number; endLine: number };
    }[];
    expect(results).to.have.length(5);
    expect(results[0]!.metadata.file).to.equal('src/retry.ts');
    expect(results.find((r) => r.metadata.symbol === 'withBackoff')?.metadata).to.include({ startLine: 20, endLine: 31 });
    // The text rendering carries the code itself, for clients that hand only text to their model.
    expect(text(answer)).to.include('src/retry.ts:').and.include('withBackoff');

    // The same collection through the HTTP face: one implementation behind both.
    const viaHttp = await fetch(`${rag}/api/rag/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': minted.acme!.apiKey },
      body: JSON.stringify({ query: 'where are failed calls tried again with growing waits', collectionName: 'shop', topK: 5 }),
    });
    expect(((await viaHttp.json()) as { results: unknown }).results).to.deep.equal(answer.structuredContent!.results);

    // The integration tools over the same collection: code evidence with file and lines, an undecided
    // check left unknown (no url), and the report counting the query above.
    const validation = await callTool(client, 'integration_validate', {
      component: 'withBackoff',
      collectionName: 'shop',
      expectedBehavior: 'It takes an operation parameter. It is visible.',
    });
    expect(validation.isError, text(validation)).to.not.equal(true);
    expect(
      (validation.structuredContent!.evidence as { role: string; file?: string; startLine?: number }[]).find(
        (e) => e.role === 'definition',
      ),
    ).to.include({ file: 'src/retry.ts', startLine: 20 });
    expect((validation.structuredContent!.checks as { status: string }[]).map((c) => c.status)).to.deep.equal(['passed', 'unknown']);
    expect(validation.structuredContent!.valid).to.equal(null);
    expect(text(validation)).to.include('withBackoff: undecided');
    const report = await callTool(client, 'integration_report', { projectName: 'shop', collectionName: 'shop' });
    expect(
      (report.structuredContent!.report as { validations: { count: number }; metrics: { queries: { count: number } } }).validations.count,
    ).to.be.at.least(1);
    expect((report.structuredContent!.report as { metrics: { queries: { count: number } } }).metrics.queries.count).to.equal(2);

    const health = await callTool(client, 'health_check');
    expect(health.structuredContent).to.include({ status: 'healthy', service: 'svc-mcp', environment: 'test' });
    expect(health.structuredContent!.features).to.deep.equal({ rag: true, glmVision: true, contextAware: true, autoGenerate: true });

    const counted = await eventually('the tool calls counted in /usage', async () => {
      const now = await usage(minted.acme!.apiKey);
      return now.queries === before.queries! + 3 && now.filesIndexed === before.filesIndexed! + filesIndexed ? now : undefined;
    });
    const info = await callTool(client, 'api_info');
    expect(info.structuredContent).to.deep.include({ name: 'svc-mcp', tools: TOOLS });
    expect(info.structuredContent!.limits).to.include({ pushMaxFiles: 20, maxFileBytes: 20000, topKMax: 50 });
    const caller = info.structuredContent!.caller as { tier: string; customerId: string; usage: Record<string, { used: number }> };
    expect(caller).to.include({ tier: 'pro', customerId: minted.acme!.customerId });
    expect(caller.usage.queries!.used).to.equal(counted.queries);
  });

  it('indexes pushed files through rag_index and finds them', async () => {
    const client = await connect(minted.acme!.apiKey, { modern: true });
    expect((await callTool(client, 'rag_setup', { projectPath: join(workspace, 'shop'), collectionName: 'pushed' })).isError).to.not.equal(
      true,
    );
    const files = [
      {
        path: 'lib/greeting.ts',
        content: '/** Says hello to someone by name. */\nexport function greet(name: string): string {\n  return `hello ${name}`;\n}\n',
      },
    ];
    const queued = await callTool(client, 'rag_index', { collectionName: 'pushed', files, wait: false });
    expect(queued.structuredContent).to.include({ success: true, collectionName: 'pushed' });
    const done = await eventually('the pushed job completed', async () => {
      const status = await callTool(client, 'rag_index_status', { jobId: queued.structuredContent!.jobId });
      return status.structuredContent?.status === 'completed' ? status : undefined;
    });
    expect(done.structuredContent).to.include({ filesIndexed: 1 });
    const answer = await callTool(client, 'rag_query', { query: 'say hello to a person', collectionName: 'pushed' });
    expect((answer.structuredContent!.results as { metadata: { file: string } }[]).map((r) => r.metadata.file)).to.include(
      'lib/greeting.ts',
    );
  });

  it('answers bad arguments and refused operations with tool errors that say what is wrong', async () => {
    const client = await connect(minted.acme!.apiKey);
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['rag_query', { collectionName: 'shop' }, /query is required/],
      ['rag_query', { query: 'x', collectionName: 'shop', topK: 500 }, /topK is 1-50/],
      ['rag_query', { query: 'x', collectionName: 'bad name!' }, /collectionName must be/],
      ['rag_setup', { projectPath: '/etc', collectionName: 'etc' }, /INVALID_PROJECT_PATH/],
      ['rag_setup', { projectPath: join(workspace, 'shop'), collectionName: 'q', vectorDB: 'qdrant' }, /VECTOR_DB_NOT_CONFIGURED/],
      ['rag_index', { collectionName: 'shop', files: [{ path: '../escape.ts', content: 'x' }] }, /INVALID_PATH/],
      ['rag_index', { collectionName: 'never-set-up' }, /collection never-set-up not found/],
      ['rag_index_status', { jobId: randomUUID() }, /NOT_FOUND/],
    ];
    for (const [name, args, message] of cases) {
      const answer = await callTool(client, name, args);
      expect(answer.isError, `${name} ${JSON.stringify(args)}`).to.equal(true);
      expect(text(answer)).to.match(message);
    }
    const refused = await callTool(client, 'rag_setup', { projectPath: '/etc', collectionName: 'etc' });
    expect(refused.structuredContent).to.include({ code: 'INVALID_PROJECT_PATH' });
    // A page at a private address is refused by the capture's address policy, as a tool error.
    const privateUrl = await callTool(client, 'glm_capture', { url: 'http://169.254.169.254/latest/meta-data/' });
    expect(privateUrl.isError).to.equal(true);
    expect(privateUrl.structuredContent).to.include({ code: 'BLOCKED_URL' });
    // An unknown tool is the protocol's error, not a crash of the server.
    const unknown = await client.callTool({ name: 'integration_deploy', arguments: { component: 'x' } }).then(
      (r) => r as ToolAnswer,
      (err: Error) => ({ isError: true, content: [{ type: 'text', text: err.message }] }),
    );
    expect(unknown.isError).to.equal(true);
    expect(text(unknown)).to.match(/integration_deploy/);
    expect((await callTool(client, 'health_check')).structuredContent).to.include({ status: 'healthy' });
  });

  it("keeps collections and jobs to their customer: another customer's are not found", async () => {
    const acme = await connect(minted.acme!.apiKey);
    const globex = await connect(minted.globex!.apiKey);
    expect((await callTool(acme, 'rag_setup', { projectPath: join(workspace, 'shop'), collectionName: 'private' })).isError).to.not.equal(
      true,
    );
    const job = await callTool(acme, 'rag_index', { collectionName: 'private' });
    expect(job.structuredContent).to.include({ status: 'completed' });
    for (const [name, args] of [
      ['rag_query', { query: 'retry', collectionName: 'private' }],
      ['rag_index', { collectionName: 'private' }],
      ['rag_index_status', { jobId: job.structuredContent!.jobId }],
    ] as const) {
      const answer = await callTool(globex, name, args);
      expect(answer.isError, name).to.equal(true);
      expect(answer.structuredContent, name).to.include({ code: 'NOT_FOUND' });
    }
  });

  it('refuses a key revoked mid-session within a second', async () => {
    const key = await mint('pro', 'revoked');
    const client = await connect(key.apiKey);
    expect((await callTool(client, 'health_check')).isError).to.not.equal(true);
    const revoke = await fetch(`${keys}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${SHARED_SECRET}` },
      body: JSON.stringify({ subscriptionId: key.subscriptionId }),
    });
    expect(revoke.status).to.equal(200);
    const refusal = await eventually(
      'the revoked key refused on the open session',
      async () =>
        callTool(client, 'health_check').then(
          () => undefined,
          (err: SdkHttpError) => err,
        ),
      1000,
    );
    expect(refusal).to.be.instanceOf(SdkHttpError);
    expect(refusal.status).to.equal(403);
    expect(refusal.message)
      .to.match(/DISABLED/)
      .and.not.include(key.apiKey);
  });

  describe('svc mcp --stdio', () => {
    const svc = ['--disable-warning=TimeoutNegativeWarning', 'app/cli/svc.ts', 'mcp', '--stdio'];
    const bridgeEnv = (apiKey: string): Record<string, string> => ({
      PATH: process.env.PATH ?? '',
      SVC_API_KEY: apiKey,
      AUTH_URL: keys,
      MCP_URL: mcp,
    });

    it('serves the same tools over stdio in a child process, one round trip', async () => {
      const client = new Client({ name: 'mcp-e2e-stdio', version: '1.0.0' });
      await client.connect(
        new StdioClientTransport({ command: process.execPath, args: svc, env: bridgeEnv(minted.acme!.apiKey), stderr: 'pipe' }),
      );
      clients.push(client);
      expect((await client.listTools()).tools.map((t) => t.name)).to.deep.equal(TOOLS);
      const answer = (await client.callTool({
        name: 'rag_query',
        arguments: { query: 'where are failed calls tried again with growing waits', collectionName: 'shop' },
      })) as ToolAnswer;
      expect(answer.isError, text(answer)).to.not.equal(true);
      expect((answer.structuredContent!.results as { metadata: { file: string } }[])[0]!.metadata.file).to.equal('src/retry.ts');
      const bad = (await client.callTool({ name: 'rag_query', arguments: { collectionName: 'shop' } })) as ToolAnswer;
      expect(bad.isError).to.equal(true);
      await client.close();
    });

    it('turns a key revoked while the bridge runs into tool errors that say so', async () => {
      const key = await mint('pro', 'stdio-revoked');
      const client = new Client({ name: 'mcp-e2e-stdio', version: '1.0.0' });
      await client.connect(new StdioClientTransport({ command: process.execPath, args: svc, env: bridgeEnv(key.apiKey), stderr: 'pipe' }));
      clients.push(client);
      expect(((await client.callTool({ name: 'health_check', arguments: {} })) as ToolAnswer).isError).to.not.equal(true);
      await fetch(`${keys}/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${SHARED_SECRET}` },
        body: JSON.stringify({ subscriptionId: key.subscriptionId }),
      });
      const refused = await eventually(
        'the bridge reporting the refusal',
        async () => {
          const answer = (await client.callTool({ name: 'health_check', arguments: {} })) as ToolAnswer;
          return answer.isError ? answer : undefined;
        },
        2000,
      );
      expect(text(refused))
        .to.match(/403/)
        .and.match(/DISABLED/);
      expect(refused.structuredContent).to.include({ code: 'DISABLED', status: 403 });
      await client.close();
    });

    it('says why it cannot start, with an exit code per reason and never the key', async () => {
      const attempt = async (env: Record<string, string>) =>
        run(process.execPath, svc, { env, timeout: 30_000 }).then(
          () => ({ code: 0, stderr: '' }),
          (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
        );
      const missing = await attempt({ PATH: process.env.PATH ?? '' });
      expect(missing).to.deep.include({ code: 78 });
      expect(missing.stderr).to.match(/SVC_API_KEY is required/);
      const unknown = await attempt(bridgeEnv(`svc_${'Q'.repeat(33)}`));
      expect(unknown.code).to.equal(77);
      expect(unknown.stderr)
        .to.match(/refused/)
        .and.not.include('Q'.repeat(33));
      const free = await attempt(bridgeEnv(minted.free!.apiKey));
      expect(free.code).to.equal(77);
      expect(free.stderr)
        .to.match(/free tier/)
        .and.not.include(minted.free!.apiKey);
      const down = await attempt({ ...bridgeEnv(minted.acme!.apiKey), AUTH_URL: `http://127.0.0.1:${await freePort()}` });
      expect(down.code).to.equal(69);
      expect(down.stderr)
        .to.match(/unreachable/)
        .and.not.include(minted.acme!.apiKey);
    });
  });
});
