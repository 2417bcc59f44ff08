import { randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { newEvent } from '../../events/envelope.ts';
import { hashKey } from '../../services/keys/key-format.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { currentPeriod } from '../../services/keys/usage.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { ragService } from '../../services/vision-rag/vision-rag.service.ts';
import { eventually, testLogger } from '../support/env.ts';
import { mintKey, retrievalEnv, retrievalPorts } from '../support/retrieval.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { useContractCheck } from '../support/contract-check.ts';
import { windowWithRoom } from '../support/rate-windows.ts';

const SHARED_SECRET = 'cd'.repeat(32);
const PRICING_URL = 'https://svc.example/pricing';
const FIXTURE = resolve('test/fixtures/rag-repo');

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** The retrieval service end to end: the gate, setup, indexing, queries, isolation, CORS. */
describe('vision RAG, part 1: code retrieval behind the gate (e2e)', function () {
  this.timeout(180_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let dir: string;
  let workspace: string;
  let rag: string;
  let keys: string;
  const minted: Record<string, string> = {};

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    dir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-rag-`));
    workspace = join(dir, 'workspace');
    mkdirSync(workspace, { recursive: true });
    cpSync(FIXTURE, join(workspace, 'shop'), { recursive: true });
    // What indexing must leave out: ignored by .gitignore, generated, binary.
    writeFileSync(join(workspace, 'shop', 'debug.log'), 'a log line\n');
    mkdirSync(join(workspace, 'shop', 'generated'), { recursive: true });
    writeFileSync(join(workspace, 'shop', 'generated', 'client.ts'), 'export const x = 1;\n');
    writeFileSync(join(workspace, 'shop', 'bundle.min.js'), 'var a=1;\n');
    writeFileSync(join(workspace, 'shop', 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]));
    const ports = await retrievalPorts();
    keys = `http://127.0.0.1:${ports.keys}`;
    rag = `http://127.0.0.1:${ports.rag}`;
    platform = await startServices(
      [keysService, ragService],
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
      minted[name] = (await mintKey(keys, SHARED_SECRET, tier, name)).apiKey;
  });

  after(async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // Every answer of this spec, checked against the answering face's OpenAPI document.
  useContractCheck();

  const call = async (method: string, path: string, options: { key?: string; bearer?: string; body?: unknown } = {}): Promise<Answer> => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (options.key) headers['x-api-key'] = options.key;
    if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
    const res = await fetch(`${rag}${path}`, {
      method,
      headers,
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  const usage = async (apiKey: string) =>
    ((await (await fetch(`${keys}/usage`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as { usage: Record<string, number> })
      .usage;
  const setup = (key: string, collectionName: string, projectPath = join(workspace, 'shop')) =>
    call('POST', '/api/rag/setup', { key, body: { projectPath, collectionName } });
  const indexNow = (key: string, collectionName: string, files?: { path: string; content: string }[]) =>
    call('POST', '/api/rag/index', { key, body: { collectionName, wait: true, ...(files ? { files } : {}) } });
  const query = (key: string, collectionName: string, text: string, topK = 5) =>
    call('POST', '/api/rag/query', { key, body: { query: text, collectionName, topK } });

  it('answers /health in its own shape, lists its paths at /api, and a CORS preflight without a key', async () => {
    const health = await call('GET', '/health');
    expect(health.status).to.equal(200);
    expect(health.body).to.include({ status: 'healthy', service: 'svc-rag', environment: 'test' });
    expect(health.body.features).to.deep.equal({ rag: true, glmVision: true, contextAware: true, autoGenerate: true });
    expect(new Date(String(health.body.timestamp)).toISOString()).to.equal(health.body.timestamp);
    const api = await call('GET', '/api');
    expect(api.body).to.deep.include({
      health: '/health',
      rag: { setup: '/api/rag/setup', query: '/api/rag/query', index: '/api/rag/index' },
    });
    for (const path of ['/api/rag/query', '/api/rag/setup', '/api/rag/index', '/api/rag/index/some-job']) {
      const preflight = await fetch(`${rag}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://ide.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type, authorization',
        },
      });
      expect(preflight.status, path).to.equal(204);
      expect(preflight.headers.get('access-control-allow-origin')).to.equal('*');
      expect(preflight.headers.get('access-control-allow-methods')).to.equal('GET, POST, PUT, DELETE, OPTIONS');
      expect(preflight.headers.get('access-control-allow-headers')).to.equal('Content-Type, Authorization');
    }
  });

  it('gates every operation in order: 401 without a key, 403 invalid with upgrade, 403 subscription required, then the operation', async () => {
    const operations: [string, string, unknown][] = [
      ['POST', '/api/rag/setup', { projectPath: join(workspace, 'shop'), collectionName: 'gate' }],
      ['POST', '/api/rag/index', { collectionName: 'gate' }],
      ['GET', `/api/rag/index/${randomUUID()}`, undefined],
      ['POST', '/api/rag/query', { query: 'retry', collectionName: 'gate' }],
    ];
    for (const [method, path, body] of operations) {
      const none = await call(method, path, { body });
      expect(none.status, `${path} without a key`).to.equal(401);
      expect(none.body).to.include({ success: false });
      const invalid = await call(method, path, { key: `svc_${'Z'.repeat(33)}`, body });
      expect(invalid.status, `${path} with an unknown key`).to.equal(403);
      expect(invalid.body).to.include({ success: false, code: 'NOT_FOUND', upgrade: PRICING_URL });
      const free = await call(method, path, { key: minted.free, body });
      expect(free.status, `${path} with a free key`).to.equal(403);
      expect(free.body).to.include({ success: false, error: 'subscription required', upgrade: PRICING_URL });
    }
    // The key may come as a bearer token too (all a browser may send after a preflight).
    expect(
      (
        await call('POST', '/api/rag/setup', {
          bearer: minted.acme,
          body: { projectPath: join(workspace, 'shop'), collectionName: 'gate' },
        })
      ).status,
    ).to.equal(200);
  });

  it("429 with the rate-limit headers once a key passes its tier's rate", async () => {
    let last: Answer | undefined;
    // Key limits count in fixed minute windows: 61 requests across a window's end are two windows' worth.
    await windowWithRoom(60, 15_000);
    for (let i = 0; i < 61; i++)
      last = await call('POST', '/api/rag/query', { key: minted.free2, body: { query: 'x', collectionName: 'none' } });
    expect(last!.status).to.equal(429);
    expect(last!.body).to.include({ success: false, code: 'RATE_LIMITED' });
    expect(last!.headers.get('x-ratelimit-limit')).to.equal('60');
    expect(last!.headers.get('retry-after')).to.match(/^\d+$/);
  });

  it("403 USAGE_EXCEEDED with upgrade when a use would pass the key's monthly quota", async () => {
    const { apiKey } = await mintKey(keys, SHARED_SECRET, 'free', 'quota');
    await platform.runtime.publisher.publish(
      newEvent('usage.incremented', { keyHash: hashKey(apiKey), metric: 'queries', amount: 100, period: currentPeriod() }),
    );
    const over = await eventually('the quota used up', async () => {
      const answer = await query(apiKey, 'none', 'anything');
      return answer.body.code === 'USAGE_EXCEEDED' ? answer : undefined;
    });
    expect(over.status).to.equal(403);
    expect(over.body).to.include({ success: false, upgrade: PRICING_URL });
  });

  it('refuses project paths outside RAG_ROOTS, through .. and through symlinks, with 400', async () => {
    const outside = mkdtempSync(join(dir, 'outside-'));
    symlinkSync(outside, join(workspace, 'link-out'));
    for (const projectPath of [
      join(workspace, '..'),
      `${workspace}/shop/../../`,
      join(workspace, 'link-out'),
      '/etc',
      'relative/path',
      join(workspace, 'missing'),
    ]) {
      const res = await setup(minted.acme!, 'paths', projectPath);
      expect(res.status, projectPath).to.equal(400);
      expect(res.body).to.include({ success: false, code: 'INVALID_PROJECT_PATH' });
    }
    const ok = await setup(minted.acme!, 'paths');
    expect(ok.status).to.equal(200);
    expect(ok.body).to.deep.equal({
      success: true,
      message: ok.body.message,
      projectPath: join(workspace, 'shop'),
      collectionName: 'paths',
      vectorDB: 'local',
    });
    const bad = await call('POST', '/api/rag/setup', {
      key: minted.acme,
      body: { projectPath: join(workspace, 'shop'), collectionName: 'bad name!' },
    });
    expect(bad.status).to.equal(400);
    const remote = await call('POST', '/api/rag/setup', {
      key: minted.acme,
      body: { projectPath: join(workspace, 'shop'), collectionName: 'x', vectorDB: 'qdrant' },
    });
    expect(remote.status).to.equal(400);
    expect(remote.body).to.deep.include({ code: 'VECTOR_DB_NOT_CONFIGURED', available: ['local'] });
    const shared = await call('POST', '/api/rag/setup', {
      key: minted.acme,
      body: { projectPath: join(workspace, 'shop'), collectionName: 'x', vectorDB: 'pgvector' },
    });
    expect(shared.body, 'this deployment runs the embedded engine only').to.deep.include({
      code: 'VECTOR_DB_NOT_CONFIGURED',
      available: ['local'],
    });
  });

  it('indexes a project, answers with the right file and lines, meters it, and serves a repeat from the cache until the index changes', async () => {
    expect((await setup(minted.acme!, 'shop')).status).to.equal(200);
    const notYet = await query(minted.acme!, 'shop', 'retry');
    expect(notYet.status).to.equal(409);
    expect(notYet.body.code).to.equal('NOT_INDEXED');
    const before = await usage(minted.acme!);

    const job = await indexNow(minted.acme!, 'shop');
    expect(job.status, JSON.stringify(job.body)).to.equal(200);
    expect(job.body).to.include({ success: true, status: 'completed', filesUnchanged: 0 });
    expect(job.body.filesIndexed).to.be.greaterThan(2);
    expect(job.body.filesSkipped).to.be.greaterThan(0); // the .gitignore'd and generated ones
    const status = await call('GET', `/api/rag/index/${String(job.body.jobId)}`, { key: minted.acme });
    expect(status.body).to.include({ jobId: job.body.jobId, status: 'completed', filesIndexed: job.body.filesIndexed });

    const answer = await query(minted.acme!, 'shop', 'where are failed calls tried again with growing waits');
    expect(answer.status).to.equal(200);
    expect(answer.body).to.include({ success: true, cached: false, query: 'where are failed calls tried again with growing waits' });
    const results = answer.body.results as {
      metadata: { file: string; startLine: number; endLine: number; type: string; symbol?: string };
    }[];
    expect(results[0]!.metadata.file).to.equal('src/retry.ts');
    // withBackoff, the function that retries, is among the answers, with its own lines.
    const backoff = results.find((r) => r.metadata.symbol === 'withBackoff');
    expect(backoff?.metadata).to.deep.include({
      file: 'src/retry.ts',
      type: 'function',
      startLine: 20,
      endLine: 31,
      language: 'typescript',
    });

    const repeat = await query(minted.acme!, 'shop', 'where are failed calls tried again with growing waits');
    expect(repeat.body.cached).to.equal(true);
    expect(repeat.body.results).to.deep.equal(answer.body.results);

    const after = await eventually('usage counted', async () => {
      const now = await usage(minted.acme!);
      return now.queries === before.queries! + 2 && now.filesIndexed === before.filesIndexed! + Number(job.body.filesIndexed)
        ? now
        : undefined;
    });
    expect(after.filesIndexed).to.equal(before.filesIndexed! + Number(job.body.filesIndexed));

    // One file changes: only it is indexed again, and the cached answer is gone.
    writeFileSync(
      join(workspace, 'shop', 'src', 'retry.ts'),
      `${'// retried calls\n'}${await (await import('node:fs/promises')).readFile(join(workspace, 'shop', 'src', 'retry.ts'), 'utf8')}`,
    );
    const again = await indexNow(minted.acme!, 'shop');
    expect(again.body).to.include({ status: 'completed', filesIndexed: 1, filesUnchanged: Number(job.body.filesIndexed) - 1 });
    const fresh = await query(minted.acme!, 'shop', 'where are failed calls tried again with growing waits');
    expect(fresh.body.cached).to.equal(false);
  });

  it('indexes pushed files (relative paths only, within the limits) and removes nothing else', async () => {
    expect((await setup(minted.acme!, 'pushed')).status).to.equal(200);
    const files = [
      {
        path: 'lib/greeting.ts',
        content: '/** Says hello to someone by name. */\nexport function greet(name: string): string {\n  return `hello ${name}`;\n}\n',
      },
    ];
    const job = await indexNow(minted.acme!, 'pushed', files);
    expect(job.body).to.include({ status: 'completed', filesIndexed: 1 });
    const answer = await query(minted.acme!, 'pushed', 'say hello to a person');
    expect((answer.body.results as { metadata: { file: string } }[])[0]!.metadata.file).to.equal('lib/greeting.ts');
    for (const path of ['../escape.ts', '/abs.ts', 'a/./b.ts', 'a\\b.ts']) {
      const res = await indexNow(minted.acme!, 'pushed', [{ path, content: 'x' }]);
      expect(res.status, path).to.equal(400);
    }
    expect(
      (
        await indexNow(
          minted.acme!,
          'pushed',
          Array.from({ length: 21 }, (_, i) => ({ path: `f${i}.ts`, content: 'x' })),
        )
      ).status,
    ).to.equal(413);
    expect((await indexNow(minted.acme!, 'pushed', [{ path: 'big.ts', content: 'x'.repeat(20_001) }])).status).to.equal(413);
    const binary = await indexNow(minted.acme!, 'pushed', [{ path: 'logo.png', content: '\u0089PNG\u0000\u0000' }]);
    expect(binary.status).to.equal(400);
    expect(binary.body.code).to.equal('BINARY_CONTENT');
    // The pushed file is still there: a push adds, it does not replace the collection.
    expect((await query(minted.acme!, 'pushed', 'say hello to a person')).body.results).to.have.length.greaterThan(0);
  });

  it('sets up a collection of pushed files only, without a project folder (the Kubernetes default), and refuses to index a folder it has none of', async () => {
    const made = await call('POST', '/api/rag/setup', { key: minted.globex!, body: { collectionName: 'pushed-only' } });
    expect(made.status).to.equal(200);
    expect(made.body).to.include({ success: true, projectPath: null, collectionName: 'pushed-only' });
    const files = [{ path: 'src/tax.ts', content: 'export const vatRate = (country: string) => (country === "DE" ? 0.19 : 0.2);\n' }];
    expect((await indexNow(minted.globex!, 'pushed-only', files)).body).to.include({ status: 'completed', filesIndexed: 1 });
    const answer = await query(minted.globex!, 'pushed-only', 'value added tax rate for a country');
    expect((answer.body.results as { metadata: { file: string } }[])[0]!.metadata.file).to.equal('src/tax.ts');
    // Without files there is no folder to read: 409, saying to push them.
    const folder = await call('POST', '/api/rag/index', { key: minted.globex!, body: { collectionName: 'pushed-only' } });
    expect(folder.status).to.equal(409);
    expect(folder.body).to.include({ success: false, code: 'NO_PROJECT_PATH' });
    // An empty projectPath is not "none": it is refused.
    expect((await call('POST', '/api/rag/setup', { key: minted.globex!, body: { collectionName: 'x', projectPath: '' } })).status).to.equal(
      400,
    );
  });

  it('keeps collections and jobs to their customer: another customer gets 404 on every operation', async () => {
    expect((await setup(minted.acme!, 'private')).status).to.equal(200);
    const job = await indexNow(minted.acme!, 'private');
    expect(job.body.status).to.equal('completed');
    expect((await query(minted.globex!, 'private', 'retry')).status).to.equal(404);
    expect((await call('POST', '/api/rag/index', { key: minted.globex, body: { collectionName: 'private' } })).status).to.equal(404);
    expect((await call('GET', `/api/rag/index/${String(job.body.jobId)}`, { key: minted.globex })).status).to.equal(404);
    // Their own collection of the same name is theirs alone.
    expect((await setup(minted.globex!, 'private')).status).to.equal(200);
    expect((await query(minted.globex!, 'private', 'retry')).status).to.equal(409);
  });

  it('deletes a collection with its index and pushed files, for its customer only; the name can be set up again', async () => {
    expect((await setup(minted.acme!, 'doomed')).status).to.equal(200);
    const pushed = [{ path: 'notes/thing.ts', content: '/** Counts the widgets in the warehouse. */\nexport const count = () => 7;\n' }];
    expect((await indexNow(minted.acme!, 'doomed', pushed)).body).to.include({ status: 'completed' });
    expect((await query(minted.acme!, 'doomed', 'count widgets')).status).to.equal(200);

    // Another customer cannot delete it: their name is another collection, which does not exist.
    expect((await call('DELETE', '/api/rag/collections/doomed', { key: minted.globex })).status).to.equal(404);
    const deleted = await call('DELETE', '/api/rag/collections/doomed', { key: minted.acme });
    expect(deleted.status, JSON.stringify(deleted.body)).to.equal(200);
    expect(deleted.body).to.deep.equal({ success: true, collectionName: 'doomed', deleted: true });
    const listed = (await call('GET', '/api/rag/collections', { key: minted.acme })).body.collections as { collectionName: string }[];
    expect(listed.map((c) => c.collectionName)).not.to.include('doomed');
    expect((await query(minted.acme!, 'doomed', 'count widgets')).status).to.equal(404);
    expect((await call('DELETE', '/api/rag/collections/doomed', { key: minted.acme })).status).to.equal(404);
    const pushedLeft = await platform.runtime.mongo.db.collection('rag_sources').countDocuments({ path: 'notes/thing.ts' });
    expect(pushedLeft).to.equal(0);
    // The folder is the customer's: untouched. Set up again, the name is a new, empty collection.
    expect((await setup(minted.acme!, 'doomed')).status).to.equal(200);
    expect((await query(minted.acme!, 'doomed', 'count widgets')).status).to.equal(409);
    expect((await call('DELETE', '/api/rag/collections/.memory', { key: minted.acme })).status).to.equal(400);
  });

  it('answers bad input with a clear 400 and a JSON body', async () => {
    for (const body of [
      {},
      { query: '', collectionName: 'shop' },
      { query: 'x', collectionName: 'shop', topK: 0 },
      { query: 'x', collectionName: 'shop', topK: 51 },
      { query: 5, collectionName: 'shop' },
    ]) {
      const res = await call('POST', '/api/rag/query', { key: minted.acme, body });
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body).to.include({ success: false });
      expect(res.body.error).to.be.a('string');
    }
    const notJson = await fetch(`${rag}/api/rag/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': minted.acme! },
      body: '{"query":',
    });
    expect(notJson.status).to.equal(400);
    expect(await notJson.json()).to.include({ success: false, code: 'MALFORMED_JSON' });
  });
});
