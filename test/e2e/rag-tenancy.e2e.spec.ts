import { cpSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { ragService } from '../../services/vision-rag/vision-rag.service.ts';
import { testLogger } from '../support/env.ts';
import { mintKey, retrievalEnv, retrievalPorts, type MintedKey } from '../support/retrieval.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { useContractCheck } from '../support/contract-check.ts';

const SHARED_SECRET = 'ef'.repeat(32);
const FIXTURE = resolve('test/fixtures/rag-repo');

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * Two customers on one deployment with the default per-customer layout: each indexes only its own
 * folders (<root>/<customerId>/), a refusal says nothing of what exists, customer input cannot
 * stall the process, the folder is checked again when it is read, and each customer has bounds.
 */
describe('vision RAG tenancy: one customer can neither read, stall nor overspend another (e2e)', function () {
  this.timeout(180_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let dir: string;
  let workspace: string;
  let rag: string;
  let keys: string;
  let acme: MintedKey;
  let globex: MintedKey;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    dir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-tenancy-`));
    workspace = join(dir, 'workspace');
    const ports = await retrievalPorts();
    keys = `http://127.0.0.1:${ports.keys}`;
    rag = `http://127.0.0.1:${ports.rag}`;
    platform = await startServices(
      [keysService, ragService],
      retrievalEnv(
        stack,
        { ports, dir, workspace, sharedSecret: SHARED_SECRET },
        {
          RAG_ROOTS_LAYOUT: 'per-customer',
          RAG_MAX_COLLECTIONS: 'pro:3',
          RAG_PUSHED_MB: 'pro:1',
          RAG_MAX_PENDING_JOBS: 'pro:2',
          RAG_MAX_FILE_BYTES: '700000',
          RAG_PUSH_BODY_LIMIT: '5mb',
        },
      ),
      testLogger(),
    );
    acme = await mintKey(keys, SHARED_SECRET, 'pro', 'acme');
    globex = await mintKey(keys, SHARED_SECRET, 'pro', 'globex');
    cpSync(FIXTURE, join(workspace, acme.customerId, 'shop'), { recursive: true });
    mkdirSync(join(workspace, globex.customerId, 'own'), { recursive: true });
    writeFileSync(join(workspace, globex.customerId, 'own', 'notes.ts'), 'export const globexNotes = "ours";\n');
    writeFileSync(join(workspace, globex.customerId, 'a-file.txt'), 'not a folder\n');
  });

  after(async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // Every answer of this spec, checked against the answering face's OpenAPI document.
  useContractCheck();

  const call = async (method: string, path: string, key: string, body?: unknown): Promise<Answer> => {
    const res = await fetch(`${rag}${path}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  const setup = (who: MintedKey, collectionName: string, projectPath: string) =>
    call('POST', '/api/rag/setup', who.apiKey, { projectPath, collectionName });

  it("sets up only the caller's own folders, and refuses every other path with one answer, whether it exists or not", async () => {
    const own = await setup(acme, 'shop', join(workspace, acme.customerId, 'shop'));
    expect(own.status).to.equal(200);
    const refusals = [
      join(workspace, acme.customerId, 'shop'), // another customer's, existing
      join(workspace, acme.customerId, 'missing'), // another customer's, missing
      join(workspace, acme.customerId), // another customer's whole folder
      workspace, // the root itself
      join(workspace, globex.customerId, 'missing'), // its own, missing
      join(workspace, globex.customerId, 'a-file.txt'), // its own, a file
      `${join(workspace, globex.customerId)}/../${acme.customerId}/shop`, // out through ..
      '/etc',
    ];
    const answers = await Promise.all(refusals.map((path) => setup(globex, 'stolen', path)));
    for (const [i, answer] of answers.entries()) {
      expect(answer.status, refusals[i]).to.equal(400);
      expect(answer.body, refusals[i]).to.deep.equal(answers[0]!.body);
    }
    expect(answers[0]!.body).to.include({ success: false, code: 'INVALID_PROJECT_PATH' });
    expect(JSON.stringify(answers[0]!.body)).to.not.include(acme.customerId);
    expect((await setup(globex, 'own', join(workspace, globex.customerId, 'own'))).status).to.equal(200);
    // Nothing of acme's reaches globex's collections.
    const indexed = await call('POST', '/api/rag/index', globex.apiKey, { collectionName: 'own', wait: true });
    expect(indexed.body).to.include({ status: 'completed', filesIndexed: 1 });
    const hits = await call('POST', '/api/rag/query', globex.apiKey, { query: 'shipping cost', collectionName: 'own', topK: 10 });
    expect((hits.body.results as { metadata: { file: string } }[]).map((r) => r.metadata.file)).to.deep.equal(['notes.ts']);
  });

  it('indexes a push whose ignore rules would backtrack without end, while the other services keep answering', async () => {
    const name = 'a'.repeat(110);
    const files = [
      { path: '.gitignore', content: '*a*a*a*a*a*a*a*a*b\n*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*c\n' },
      { path: `src/${name}`, content: 'export const deep = 1;\n' },
      { path: name, content: 'export const top = 2;\n' },
    ];
    expect((await setup(globex, 'pushed', join(workspace, globex.customerId, 'own'))).status).to.equal(200);
    const job = call('POST', '/api/rag/index', globex.apiKey, { collectionName: 'pushed', files, wait: true });
    // While the job runs, the keys service in this same process still answers.
    let answered = 0;
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${keys}/health/live`, { signal: AbortSignal.timeout(5000) });
      expect(res.status).to.equal(200);
      answered++;
    }
    const done = await job;
    expect(answered).to.equal(5);
    expect(done.status).to.equal(200);
    expect(done.body).to.include({ status: 'completed' });
    expect(done.body.filesIndexed).to.be.at.least(2);
  });

  it('does not read through a folder replaced by a link after setup, and does not say where it points', async () => {
    const folder = join(workspace, globex.customerId, 'moving');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'mine.ts'), 'export const mine = 1;\n');
    expect((await setup(globex, 'moving', folder)).status).to.equal(200);
    // After setup the folder becomes a link to another customer's code.
    renameSync(folder, `${folder}-old`);
    symlinkSync(join(workspace, acme.customerId, 'shop'), folder);
    const indexed = await call('POST', '/api/rag/index', globex.apiKey, { collectionName: 'moving', wait: true });
    expect(indexed.status).to.equal(422);
    expect(indexed.body).to.include({ success: false, code: 'SOURCES_UNUSABLE' });
    expect(String(indexed.body.error)).to.match(/no longer available/);
    expect(JSON.stringify(indexed.body)).to.not.include(workspace);
    const hits = await call('POST', '/api/rag/query', globex.apiKey, { query: 'shipping cost', collectionName: 'moving', topK: 10 });
    expect(JSON.stringify(hits.body)).to.not.include('shipping');
  });

  it("bounds each customer's collections and pushed bytes by tier, and says so", async () => {
    // acme has 1 collection (shop); pro:3 allows two more.
    expect((await setup(acme, 'two', join(workspace, acme.customerId, 'shop'))).status).to.equal(200);
    expect((await setup(acme, 'three', join(workspace, acme.customerId, 'shop'))).status).to.equal(200);
    const fourth = await setup(acme, 'four', join(workspace, acme.customerId, 'shop'));
    expect(fourth.status).to.equal(403);
    expect(fourth.body).to.include({ success: false, code: 'COLLECTION_LIMIT' });
    // Setting one up again is not a new one.
    expect((await setup(acme, 'two', join(workspace, acme.customerId, 'shop'))).status).to.equal(200);
    // pro:1 MB of pushed sources: a 600 KB file fits, a second does not.
    const big = `// ${'x'.repeat(600_000)}\n`;
    expect(
      (await call('POST', '/api/rag/index', acme.apiKey, { collectionName: 'two', files: [{ path: 'big1.ts', content: big }] })).status,
    ).to.equal(202);
    const over = await call('POST', '/api/rag/index', acme.apiKey, { collectionName: 'two', files: [{ path: 'big2.ts', content: big }] });
    expect(over.status).to.equal(413);
    expect(over.body).to.include({ success: false, code: 'STORAGE_LIMIT' });
    // globex's room is its own.
    expect(
      (await call('POST', '/api/rag/index', globex.apiKey, { collectionName: 'own', files: [{ path: 'big.ts', content: big }] })).status,
    ).to.equal(202);
  });

  it("bounds each customer's index jobs queued or running at once, frees a slot when a job ends, and refuses with 429 and Retry-After", async () => {
    const initech = await mintKey(keys, SHARED_SECRET, 'pro', 'initech');
    mkdirSync(join(workspace, initech.customerId, 'jobs'), { recursive: true });
    expect((await setup(initech, 'jobs', join(workspace, initech.customerId, 'jobs'))).status).to.equal(200);
    const push = (i: number) =>
      fetch(`${rag}/api/rag/index`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': initech.apiKey },
        body: JSON.stringify({ collectionName: 'jobs', files: [{ path: `f${i}.ts`, content: `export const f${i} = ${i};\n` }] }),
      });
    // Eight at once: each claims its slot before its job is even published, so no job can end in between.
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => push(i)));
    const accepted = answers.filter((res) => res.status === 202);
    const refused = answers.filter((res) => res.status === 429);
    expect(accepted).to.have.length(2);
    expect(refused).to.have.length(6);
    expect(refused[0]!.headers.get('retry-after')).to.equal('5');
    const body = (await refused[0]!.json()) as Record<string, unknown>;
    expect(body).to.include({ success: false, code: 'TOO_MANY_JOBS', limit: 2 });
    // Another customer's jobs are not held up by these.
    const other = await call('POST', '/api/rag/index', globex.apiKey, { collectionName: 'own', wait: true });
    expect(other.body).to.include({ status: 'completed' });
    // Once the accepted jobs end, their slots are free again.
    for (const res of accepted) {
      const { jobId } = (await res.json()) as { jobId: string };
      for (;;) {
        const job = await call('GET', `/api/rag/index/${jobId}`, initech.apiKey);
        if (job.body.status === 'completed' || job.body.status === 'failed') break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    const after = await call('POST', '/api/rag/index', initech.apiKey, {
      collectionName: 'jobs',
      files: [{ path: 'late.ts', content: 'export const late = 1;\n' }],
      wait: true,
    });
    expect(after.status).to.equal(200);
    expect(after.body).to.include({ status: 'completed' });
  });
});
