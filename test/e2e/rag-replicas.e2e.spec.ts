import { projectIndexedCollection } from '../support/indexed-collection.ts';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { type RunningPlatform, startServices } from '../../app/cli/run.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { collectionIdOf } from '../../services/rag/collections.projection.ts';
import { PgIndexStore } from '../../services/rag/index-store/pg/pg-store.ts';
import { ragService } from '../../services/vision-rag/vision-rag.service.ts';
import { testLogger } from '../support/env.ts';
import { mintKey, retrievalEnv, retrievalPorts } from '../support/retrieval.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { useContractCheck } from '../support/contract-check.ts';

const SHARED_SECRET = 'ef'.repeat(32);
const FIXTURE = resolve('test/fixtures/rag-repo');
const QUESTION = 'where are failed calls tried again with growing waits';

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

interface Hit {
  id: string;
  content: string;
  metadata: { file: string };
}

/**
 * Two replicas of the rag service (two runtimes, as two pods are: their own ports, SQLite folders
 * and caches) on one MongoDB database, one Kafka prefix and one PostgreSQL index
 * (RAG_INDEX_ENGINE=postgres): what one indexes the other answers from at once, and a write
 * through either makes the other's cached answers unreachable.
 */
describe('vision RAG replicas: two rag services sharing one PostgreSQL index (e2e)', function () {
  this.timeout(180_000);
  let stack: StackEnv;
  let first: RunningPlatform | undefined;
  let second: RunningPlatform | undefined;
  let dir: string;
  let workspace: string;
  let schemaUrl: string | undefined;
  const rag: string[] = [];
  let apiKey: string;
  let customerId: string | undefined;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    const url = (stack as { RAG_DATABASE_URL?: string }).RAG_DATABASE_URL || process.env.RAG_DATABASE_URL;
    if (!url) throw new Error('the stack gave no RAG_DATABASE_URL (PostgreSQL with pgvector) and the environment has none');
    schemaUrl = url;
    dir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-replicas-`));
    workspace = join(dir, 'workspace');
    mkdirSync(workspace, { recursive: true });
    cpSync(FIXTURE, join(workspace, 'shop'), { recursive: true });
    const ports = await retrievalPorts();
    const env = retrievalEnv(
      stack,
      { ports, dir, workspace, sharedSecret: SHARED_SECRET },
      { RAG_INDEX_ENGINE: 'postgres', RAG_DATABASE_URL: url },
    );
    const secondPort = await freePort();
    first = await startServices([keysService, ragService], env, testLogger());
    second = await startServices(
      [ragService],
      { ...env, RAG_PORT: String(secondPort), MCP_PORT: String(await freePort()), RAG_DATA_DIR: join(dir, 'rag-2') },
      testLogger(),
    );
    rag.push(`http://127.0.0.1:${ports.rag}`, `http://127.0.0.1:${secondPort}`);
    ({ apiKey, customerId } = await mintKey(`http://127.0.0.1:${ports.keys}`, SHARED_SECRET, 'pro', 'replicas'));
  });

  after(async () => {
    await first?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await second?.stop();
    await first?.stop();
    if (schemaUrl) {
      // The collection this suite made, not the schema other suites share.
      const pool = new pg.Pool({ connectionString: schemaUrl, max: 1 });
      if (customerId) await PgIndexStore.drop(pool, collectionIdOf(customerId, 'shop')).catch(() => undefined);
      await pool.end();
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // Every answer of this spec, checked against the answering face's OpenAPI document.
  useContractCheck();

  const call = async (replica: 0 | 1, path: string, body: unknown): Promise<Answer> => {
    const res = await fetch(`${rag[replica]}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  const indexNow = (replica: 0 | 1) => call(replica, '/api/rag/index', { collectionName: 'shop', wait: true });
  const query = (replica: 0 | 1) => call(replica, '/api/rag/query', { query: QUESTION, collectionName: 'shop', topK: 5 });

  it('answers from either replica what the other indexed, at once, and never from a cache the other made stale', async () => {
    const setup = await call(0, '/api/rag/setup', { projectPath: join(workspace, 'shop'), collectionName: 'shop' });
    expect(setup.status, JSON.stringify(setup.body)).to.equal(200);
    expect(setup.body.vectorDB, 'the store this deployment serves, when none is named').to.equal('pgvector');
    const job = await indexNow(0);
    expect(job.body, JSON.stringify(job.body)).to.include({ success: true, status: 'completed', filesUnchanged: 0 });
    const indexed = Number(job.body.filesIndexed);
    expect(indexed).to.be.greaterThan(2);

    // Replica 2 never indexed anything: its answer comes from the shared index.
    const there = await query(1);
    expect(there.status, JSON.stringify(there.body)).to.equal(200);
    expect(there.body.cached).to.equal(false);
    const hits = there.body.results as Hit[];
    expect(hits[0]?.metadata.file).to.equal('src/retry.ts');
    const here = await query(0);
    expect(here.body.cached).to.equal(false);
    expect(here.body.results).to.deep.equal(there.body.results);
    expect((await query(0)).body.cached, 'a repeat on replica 1 is served from its cache').to.equal(true);

    // A changed file indexed through replica 2: replica 1's next answer is read again, and shows it.
    const retry = join(workspace, 'shop', 'src', 'retry.ts');
    writeFileSync(retry, `// retried calls wait longer each time: replicas\n${readFileSync(retry, 'utf8')}`);
    const again = await indexNow(1);
    expect(again.body, JSON.stringify(again.body)).to.include({ status: 'completed', filesIndexed: 1, filesUnchanged: indexed - 1 });
    const fresh = await query(0);
    expect(fresh.body.cached).to.equal(false);
    expect(fresh.body.results).to.not.deep.equal(here.body.results);
    expect((fresh.body.results as Hit[]).some((h) => h.content.includes('retried calls wait longer each time: replicas'))).to.equal(true);
    const freshThere = await query(1);
    expect(freshThere.body.cached).to.equal(false);
    expect(freshThere.body.results).to.deep.equal(fresh.body.results);
  });

  it('honours the vector store a collection names: pgvector here, any other refused with what the deployment has', async () => {
    const named = await call(1, '/api/rag/setup', { projectPath: join(workspace, 'shop'), collectionName: 'named', vectorDB: 'pgvector' });
    expect(named.status, JSON.stringify(named.body)).to.equal(200);
    expect(named.body.vectorDB).to.equal('pgvector');
    for (const vectorDB of ['local', 'qdrant']) {
      const refused = await call(0, '/api/rag/setup', { projectPath: join(workspace, 'shop'), collectionName: 'other', vectorDB });
      expect(refused.status, vectorDB).to.equal(400);
      expect(refused.body).to.deep.include({ code: 'VECTOR_DB_NOT_CONFIGURED', available: ['pgvector'] });
    }
    // A collection an embedded-engine deployment set up: its index is not in PostgreSQL, so it is refused, not answered empty.
    await projectIndexedCollection(first!.runtime.mongo.db, {
      customerId: customerId!,
      collectionName: 'embedded',
      projectPath: join(workspace, 'shop'),
      file: 'src/retry.ts',
      topic: 'test.rag-replicas',
      vectorDB: 'local',
    });
    const asked = await call(1, '/api/rag/query', { query: QUESTION, collectionName: 'embedded', topK: 5 });
    expect(asked.status, JSON.stringify(asked.body)).to.equal(409);
    expect(asked.body).to.deep.include({ code: 'VECTOR_DB_NOT_SERVED', available: ['pgvector'] });
    const reindex = await call(0, '/api/rag/index', { collectionName: 'embedded' });
    expect(reindex.status, JSON.stringify(reindex.body)).to.equal(409);
    expect(reindex.body.code).to.equal('VECTOR_DB_NOT_SERVED');
  });
});
