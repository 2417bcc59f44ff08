import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { type RunningPlatform, startServices } from '../../app/cli/run.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { collectionIdOf } from '../../services/rag/collections.projection.ts';
import { PgIndexStore } from '../../services/rag/index-store/pg/pg-store.ts';
import { indexerService } from '../../services/rag/indexer.service.ts';
import { ragService } from '../../services/vision-rag/vision-rag.service.ts';
import { eventually, testLogger } from '../support/env.ts';
import { mintKey, retrievalEnv, retrievalPorts } from '../support/retrieval.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { useContractCheck } from '../support/contract-check.ts';

const SHARED_SECRET = 'ab'.repeat(32);
const FIXTURE = resolve('test/fixtures/rag-repo');

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * The indexer as a service of its own (`svc run indexer`): a rag face with RAG_RUN_INDEXER=false
 * takes index requests but runs none; the indexer, another runtime on the same MongoDB database,
 * Kafka prefix and PostgreSQL index, runs them, and the face answers from what it wrote.
 */
describe('rag indexer service: the face leaves index jobs to it (e2e)', function () {
  this.timeout(180_000);
  let stack: StackEnv;
  let face: RunningPlatform | undefined;
  let indexer: RunningPlatform | undefined;
  let dir: string;
  let workspace: string;
  let env: NodeJS.ProcessEnv;
  let url: string | undefined;
  let rag: string;
  let apiKey: string;
  let customerId: string | undefined;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    url = (stack as { RAG_DATABASE_URL?: string }).RAG_DATABASE_URL || process.env.RAG_DATABASE_URL;
    if (!url) throw new Error('the stack gave no RAG_DATABASE_URL (PostgreSQL with pgvector) and the environment has none');
    dir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-indexer-`));
    workspace = join(dir, 'workspace');
    mkdirSync(workspace, { recursive: true });
    cpSync(FIXTURE, join(workspace, 'shop'), { recursive: true });
    const ports = await retrievalPorts();
    env = retrievalEnv(
      stack,
      { ports, dir, workspace, sharedSecret: SHARED_SECRET },
      { RAG_INDEX_ENGINE: 'postgres', RAG_DATABASE_URL: url, RAG_RUN_INDEXER: 'false' },
    );
    face = await startServices([keysService, ragService], env, testLogger());
    rag = `http://127.0.0.1:${ports.rag}`;
    ({ apiKey, customerId } = await mintKey(`http://127.0.0.1:${ports.keys}`, SHARED_SECRET, 'pro', 'indexer'));
  });

  after(async () => {
    await face?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await indexer?.stop();
    await face?.stop();
    if (url && customerId) {
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      await PgIndexStore.drop(pool, collectionIdOf(customerId, 'shop')).catch(() => undefined);
      await pool.end();
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // Every answer of this spec, checked against the answering face's OpenAPI document.
  useContractCheck();

  const call = async (method: string, path: string, body?: unknown): Promise<Answer> => {
    const res = await fetch(`${rag}${path}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };

  it('queues a job the face does not run, which the indexer service then runs, and the face answers from it', async () => {
    expect((await call('POST', '/api/rag/setup', { projectPath: join(workspace, 'shop'), collectionName: 'shop' })).status).to.equal(200);
    const job = await call('POST', '/api/rag/index', { collectionName: 'shop' });
    expect(job.body, JSON.stringify(job.body)).to.include({ success: true, status: 'queued' });
    const jobId = String(job.body.jobId);
    // No process runs index jobs yet: the job is still queued, whenever this looks.
    expect((await call('GET', `/api/rag/index/${jobId}`)).body).to.include({ status: 'queued' });
    expect((await call('POST', '/api/rag/query', { query: 'retry', collectionName: 'shop' })).status).to.equal(409);

    indexer = await startServices([indexerService], { ...env, RAG_DATA_DIR: join(dir, 'rag-indexer') }, testLogger());
    const done = await eventually(
      'the indexer service ran the job',
      async () => {
        const status = await call('GET', `/api/rag/index/${jobId}`);
        return status.body.status === 'completed' || status.body.status === 'failed' ? status.body : undefined;
      },
      60_000,
    );
    expect(done, JSON.stringify(done)).to.include({ status: 'completed' });
    expect(Number(done.filesIndexed)).to.be.greaterThan(2);

    const answer = await call('POST', '/api/rag/query', {
      query: 'where are failed calls tried again with growing waits',
      collectionName: 'shop',
    });
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect((answer.body.results as { metadata: { file: string } }[])[0]?.metadata.file).to.equal('src/retry.ts');

    // wait: true answers once the indexer has run the job.
    const again = await call('POST', '/api/rag/index', { collectionName: 'shop', wait: true });
    expect(again.body, JSON.stringify(again.body)).to.include({ status: 'completed', filesIndexed: 0 });
  });
});
