import { randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { validate } from '@readme/openapi-parser';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { accountsClient, keysClient, ragClient } from '../../app/openapi/client.ts';
import { OPENAPI_DIR } from '../../app/openapi/generate.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { accountsService } from '../../services/accounts/accounts.service.ts';
import { webhookIngressService } from '../../services/billing/webhook-ingress.service.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { mcpService } from '../../services/mcp/mcp.service.ts';
import { DOCS_CSP } from '../../services/platform/http/api-docs.ts';
import { ragService } from '../../services/vision-rag/vision-rag.service.ts';
import { launchChromiumForTests } from '../integration/vision/chromium-under-test.ts';
import { ContractCheck, useContractCheck } from '../support/contract-check.ts';
import { testLogger } from '../support/env.ts';
import { retrievalEnv } from '../support/retrieval.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';

const SHARED_SECRET = 'ef'.repeat(32);
const FIXTURE = resolve('test/fixtures/rag-repo');

/**
 * The OpenAPI documents as the running faces serve them, the API reference page in a real
 * Chromium, the generated typed client end to end, and (useContractCheck) every answer of this
 * spec checked against its face's document.
 */
describe('OpenAPI: the documents served, the reference page and the typed client (e2e)', function () {
  this.timeout(180_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let dir: string;
  let workspace: string;
  const urls: Record<'accounts' | 'keys' | 'webhooks' | 'rag' | 'mcp', string> = { accounts: '', keys: '', webhooks: '', rag: '', mcp: '' };

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
    dir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-openapi-`));
    workspace = join(dir, 'workspace');
    mkdirSync(workspace, { recursive: true });
    cpSync(FIXTURE, join(workspace, 'shop'), { recursive: true });
    const ports = {
      accounts: await freePort(),
      keys: await freePort(),
      webhooks: await freePort(),
      rag: await freePort(),
      mcp: await freePort(),
    };
    for (const name of Object.keys(urls) as (keyof typeof urls)[]) urls[name] = `http://127.0.0.1:${ports[name]}`;
    platform = await startServices(
      [accountsService, keysService, webhookIngressService, ragService, mcpService],
      retrievalEnv(
        stack,
        { ports, dir, workspace, sharedSecret: SHARED_SECRET },
        { ACCOUNTS_PORT: String(ports.accounts), WEBHOOKS_PORT: String(ports.webhooks) },
      ),
      testLogger(),
    );
  });

  after(async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const contract = useContractCheck();

  for (const face of ['accounts', 'keys', 'webhooks', 'rag', 'mcp'] as const) {
    it(`${face} serves GET /openapi.json: a valid OpenAPI 3.1 document, the one committed in openapi/`, async () => {
      const res = await fetch(`${urls[face]}/openapi.json`);
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^application\/json/);
      const served = (await res.json()) as { openapi: string };
      expect(served.openapi).to.equal('3.1.1');
      expect((await validate(structuredClone(served) as Parameters<typeof validate>[0])).valid).to.equal(true);
      expect(served).to.deep.equal(JSON.parse(readFileSync(join(OPENAPI_DIR, `${face}.json`), 'utf8')));
    });
  }

  it('the contract check finds an answer that differs from its document (so it can fail)', async () => {
    const check = new ContractCheck();
    const answer = (status: number, body: unknown) =>
      new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
    await check.answer('GET', `${urls.accounts}/auth/me`, answer(200, { id: 1, email: 'a@b.c' }));
    await check.answer('GET', `${urls.accounts}/auth/me`, answer(418, { nope: true }));
    await check.answer(
      'GET',
      `${urls.accounts}/health/live`,
      new Response('ok', { status: 200, headers: { 'content-type': 'text/plain' } }),
    );
    await check.answer('GET', `${urls.accounts}/auth/me`, answer(401, { error: 'no token', code: 'UNAUTHORIZED' }));
    expect(check.checked).to.equal(4);
    expect(check.problems).to.have.length(3);
    expect(check.problems[0]).to.match(/GET \/auth\/me → 200: data must have required property/);
    expect(check.problems[2]).to.match(/content type text\/plain not in the document/);
  });

  it('signs up, gets a key, validates it, and sets up, indexes and queries a collection through the typed client', async () => {
    const accounts = accountsClient(urls.accounts);
    const keys = keysClient(urls.keys);
    const rag = ragClient(urls.rag);

    const email = `client-${randomUUID().slice(0, 8)}@example.test`;
    const signup = await accounts.POST('/auth/signup', { body: { email, password: 'correct horse battery', name: 'Client' } });
    expect(signup.response.status, JSON.stringify(signup.error)).to.equal(201);
    const user = signup.data!.user;
    expect(user.email).to.equal(email);

    const me = await accounts.GET('/auth/me', { headers: { authorization: `Bearer ${signup.data!.token}` } });
    expect(me.data?.id).to.equal(user.id);

    // Operators mint a key for the account's subscription (a payment webhook does it in production).
    const generated = await keys.POST('/generate', {
      headers: { authorization: `Bearer ${SHARED_SECRET}` },
      body: { customerId: user.id, email, tier: 'pro', subscriptionId: `sub-${randomUUID()}` },
    });
    expect(generated.response.status, JSON.stringify(generated.error)).to.equal(201);
    const apiKey = generated.data!.apiKey;

    const validated = await keys.POST('/validate', { body: { apiKey } });
    expect(validated.response.status).to.equal(200);
    const answer = validated.data!;
    if (!answer.valid) throw new Error(`the key was refused: ${answer.code}`);
    expect(answer.tier).to.equal('pro');
    expect(answer.customerId).to.equal(user.id);
    expect(answer.features.visionRAG).to.equal(true);

    const headers = { 'x-api-key': apiKey };
    const setup = await rag.POST('/api/rag/setup', {
      headers,
      body: { projectPath: join(workspace, 'shop'), collectionName: 'shop' },
    });
    expect(setup.response.status, JSON.stringify(setup.error)).to.equal(200);
    expect(setup.data!.collectionName).to.equal('shop');

    const indexed = await rag.POST('/api/rag/index', { headers, body: { collectionName: 'shop', wait: true } });
    expect(indexed.response.status, JSON.stringify(indexed.error)).to.equal(200);
    const job = indexed.data!;
    // 200 is the ended job; 202 (still queued) has no counts.
    if (!('filesIndexed' in job)) throw new Error(`the job did not end: ${job.status}`);
    expect(job.status).to.equal('completed');
    expect(job.filesIndexed).to.be.greaterThan(0);

    const status = await rag.GET('/api/rag/index/{jobId}', { headers, params: { path: { jobId: job.jobId } } });
    expect(status.data?.status).to.equal('completed');

    const query = await rag.POST('/api/rag/query', {
      headers,
      body: { query: 'where are failed payments retried?', collectionName: 'shop', topK: 3 },
    });
    expect(query.response.status, JSON.stringify(query.error)).to.equal(200);
    expect(query.data!.results.length).to.be.within(1, 3);
    expect(query.data!.results[0]!.metadata.file).to.be.a('string');

    // A refusal comes back typed too: no key, 401 in the face's error shape.
    const refused = await rag.POST('/api/rag/query', { body: { query: 'x', collectionName: 'shop' } });
    expect(refused.response.status).to.equal(401);
    expect(refused.error).to.include({ success: false, code: 'UNAUTHORIZED' });

    expect(contract.check().problems).to.deep.equal([]);
    expect(contract.check().checked).to.be.greaterThan(8);
  });

  describe('the API reference page in a real Chromium', () => {
    let browser: Browser;

    before(async function () {
      this.timeout(600_000); // a first run provisions Chromium
      browser = await launchChromiumForTests();
    });

    after(async () => {
      await browser?.close();
    });

    it('GET /docs renders the document from the service alone, under its CSP', async function () {
      this.timeout(60_000);
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      const elsewhere: string[] = [];
      const answeredElsewhere: string[] = [];
      const errors: string[] = [];
      page.on('request', (request) => {
        if (!request.url().startsWith(urls.rag)) elsewhere.push(request.url());
      });
      page.on('response', (response) => {
        if (!response.url().startsWith(urls.rag)) answeredElsewhere.push(response.url());
      });
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      page.on('pageerror', (error) => errors.push(error.message));
      // Should the CSP let anything through, it still goes nowhere (and is counted above).
      await page.route(
        (url) => !url.href.startsWith(urls.rag),
        (route) => route.abort(),
      );

      const res = await page.goto(`${urls.rag}/docs`, { waitUntil: 'load' });
      expect(res?.status()).to.equal(200);
      expect(res?.headers()['content-security-policy']).to.equal(DOCS_CSP);
      // Rendered by the bundle from the document: the face's title and an operation's summary.
      await page.getByText('svc vision RAG').first().waitFor({ state: 'visible', timeout: 30_000 });
      await page.getByText('Search a collection').first().waitFor({ state: 'visible', timeout: 30_000 });
      // The only thing the page asks of elsewhere is Scalar's default fonts, which the CSP refuses
      // in the browser: nothing is answered from elsewhere, and no other error.
      expect(answeredElsewhere).to.deep.equal([]);
      for (const url of elsewhere) expect(url).to.match(/^https:\/\/fonts\.scalar\.com\/[\w-]+\.woff2$/);
      for (const error of errors)
        expect(error).to.match(/^Loading the font 'https:\/\/fonts\.scalar\.com\/[\w-]+\.woff2' violates .*font-src 'self'/);
      await page.close();
    });
  });
});
