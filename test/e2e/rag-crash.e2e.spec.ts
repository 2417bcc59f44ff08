import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { waitUntil } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { EXIT } from '../../app/cli/exit.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { eventually, testLogger } from '../support/env.ts';
import { mintKey, retrievalEnv, retrievalPorts } from '../support/retrieval.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { useContractCheck } from '../support/contract-check.ts';

const SHARED_SECRET = 'ef'.repeat(32);
const run = promisify(execFile);

/**
 * The indexer in a process of its own, killed (SIGKILL) in the middle of a job and started again:
 * the job carries on and ends completed, never left "running". And the operators' `svc rag`.
 */
describe("vision RAG: a crash during indexing, and the operators' CLI (e2e)", function () {
  this.timeout(300_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let env: NodeJS.ProcessEnv;
  let dir: string;
  let workspace: string;
  let rag: string;
  let apiKey: string;
  let child: ChildProcess | undefined;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    dir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-ragcrash-`));
    workspace = join(dir, 'workspace');
    // A project large enough that indexing takes a while: the driver's own source.
    mkdirSync(workspace, { recursive: true });
    cpSync(resolve('node_modules/mongodb/src/operations'), join(workspace, 'ops'), { recursive: true });
    cpSync(resolve('test/fixtures/rag-repo'), join(workspace, 'small'), { recursive: true });
    const ports = await retrievalPorts();
    rag = `http://127.0.0.1:${ports.rag}`;
    env = retrievalEnv(
      stack,
      { ports, dir, workspace, sharedSecret: SHARED_SECRET },
      { KAFKA_SESSION_TIMEOUT_MS: '10000', EMBEDDING_THREADS: '1' },
    );
    platform = await startServices([keysService], env, testLogger());
    apiKey = (await mintKey(`http://127.0.0.1:${ports.keys}`, SHARED_SECRET, 'team', 'crash')).apiKey;
  });

  after(async () => {
    if (child?.exitCode === null) child.kill('SIGKILL');
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // Every answer of this spec, checked against the answering face's OpenAPI document.
  useContractCheck();

  async function startRag(): Promise<ChildProcess> {
    const proc = spawn(process.execPath, ['--disable-warning=TimeoutNegativeWarning', 'app/cli/svc.ts', 'run', 'rag'], {
      env: { ...process.env, ...env },
      stdio: 'ignore',
    });
    const died = new Promise<never>((_, reject) => proc.once('exit', (code) => reject(new Error(`svc run rag exited with ${code}`))));
    await waitUntil(
      'the rag service',
      async () => {
        const health = await fetch(`${rag}/health`);
        if (((await health.json()) as { status: string }).status !== 'healthy') throw new Error('not healthy yet');
      },
      120_000,
      died,
    );
    return proc;
  }

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${rag}${path}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('a job whose indexer is killed mid-way carries on after the restart and ends completed, with every file indexed once', async () => {
    child = await startRag();
    expect((await call('POST', '/api/rag/setup', { projectPath: join(workspace, 'ops'), collectionName: 'ops' })).status).to.equal(200);
    const accepted = await call('POST', '/api/rag/index', { collectionName: 'ops' });
    expect(accepted.status).to.equal(202);
    const jobId = String(accepted.body.jobId);
    await eventually(
      'the job running',
      async () => ((await call('GET', `/api/rag/index/${jobId}`)).body.status === 'running' ? true : undefined),
      60_000,
    );
    // Let it write some files before the crash.
    await eventually(
      'some files indexed',
      async () => (readdirSync(join(dir, 'rag')).some((f) => f.endsWith('.sqlite-wal') || f.endsWith('.sqlite')) ? true : undefined),
      30_000,
    );
    child.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));
    expect((await platform.runtime.mongo.db.collection('rag_index_jobs').findOne({ _id: jobId as never }))?.status).to.equal('running');

    child = await startRag();
    const done = await eventually(
      'the job completed after the restart',
      async () => {
        const status = await call('GET', `/api/rag/index/${jobId}`);
        return status.body.status === 'completed' || status.body.status === 'failed' ? status.body : undefined;
      },
      240_000,
    );
    expect(done.status).to.equal('completed');
    const files = readdirSync(join(workspace, 'ops'), { recursive: true }).filter((f) => String(f).endsWith('.ts')).length;
    expect(Number(done.filesIndexed) + Number(done.filesUnchanged)).to.equal(files);
    const job = await platform.runtime.mongo.db.collection('rag_index_jobs').findOne({ _id: jobId as never });
    expect(job?.attempt).to.be.at.least(2);
    const answer = await call('POST', '/api/rag/query', { query: 'how are documents inserted in bulk', collectionName: 'ops' });
    expect(answer.status).to.equal(200);
    expect((answer.body.results as unknown[]).length).to.be.greaterThan(0);
    child.kill('SIGTERM');
    await new Promise((r) => child!.once('exit', r));
  });

  it('`svc rag index`, `query` and `reindex` work for operators, with counts, and say clearly what is wrong', async () => {
    const svc = async (...args: string[]) => {
      try {
        const out = await run(process.execPath, ['--disable-warning=TimeoutNegativeWarning', 'app/cli/svc.ts', 'rag', ...args], {
          env: { ...process.env, ...env },
          timeout: 180_000,
        });
        return { code: 0, stdout: out.stdout, stderr: out.stderr };
      } catch (err) {
        const e = err as { code?: number; stdout?: string; stderr?: string };
        return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
      }
    };
    const indexed = await svc('index', 'fixture', join(workspace, 'small'));
    expect(indexed.code, indexed.stderr).to.equal(EXIT.ok);
    expect(indexed.stdout).to.match(/indexed fixture: [1-9]\d* files indexed, 0 unchanged, \d+ skipped, 0 removed; \d+ chunks; [\d.]+ s/);
    const found = await svc('query', 'fixture', 'slug from a title');
    expect(found.code).to.equal(EXIT.ok);
    expect(found.stdout).to.match(/^1\. tools\/slugify\.py:\d+-\d+/m);
    const again = await svc('reindex', 'fixture');
    expect(again.stdout).to.match(/indexed fixture: [1-9]\d* files indexed, 0 unchanged/);
    expect((await svc('query', 'nothing-here', 'x')).code).to.not.equal(EXIT.ok);
    expect((await svc('index', 'fixture', '/etc')).stderr).to.match(/not a folder inside the folders this service may read \(RAG_ROOTS\)/);
    expect((await svc('frobnicate')).code).to.equal(EXIT.usage);
  });
});
