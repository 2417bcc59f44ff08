import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { expect } from 'chai';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { mcpService } from '../../services/mcp/mcp.service.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { ragService } from '../../services/vision-rag/vision-rag.service.ts';
import { chromiumForTests } from '../integration/vision/chromium-under-test.ts';
import { testLogger } from '../support/env.ts';
import { breakFile, runMocha, runPlaywright, uiKitCopy, writeGenerated, type GeneratedFileBody } from '../support/generated-tests.ts';
import { mintKey, retrievalEnv, retrievalPorts, type MintedKey } from '../support/retrieval.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { startUiKitSite, type UiKitSite } from '../support/ui-kit-site.ts';
import { useContractCheck } from '../support/contract-check.ts';

const SHARED_SECRET = 'cd'.repeat(32);

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

interface CheckBody {
  description: string;
  status: 'passed' | 'failed' | 'unknown';
  detail: string;
  decidedBy: string | null;
}

interface EvidenceBody {
  source: string;
  role: string;
  file?: string;
  startLine?: number;
  endLine?: number;
  selector?: string;
  snippet: string;
}

interface ToolAnswer {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
}

interface GenerateBody {
  files: GeneratedFileBody[];
  framework: string;
  runCommand: string;
  cases: Array<{ name: string; kind: string }>;
}

/**
 * The integration operations end to end: the ui-kit fixture (a small component library and its shop
 * page on 127.0.0.1) indexed for real, the real browser, generated tests run for real; over HTTP, and
 * through the MCP tools where the request names no collection.
 */
describe('vision RAG, part 3: integration validate, generate and report (e2e)', function () {
  this.timeout(300_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let site: UiKitSite;
  let dir: string;
  let rag: string;
  let keys: string;
  let mcp: string;
  let workspace: string;
  let acme: MintedKey;
  const broken: UiKitSite[] = [];
  const clients: Client[] = [];

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    chromiumForTests();
    stack = await useStack();
    site = await startUiKitSite();
    dir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-integration-`));
    workspace = join(dir, 'workspace');
    mkdirSync(workspace, { recursive: true });
    uiKitCopy(workspace, 'ui-kit');
    const ports = await retrievalPorts();
    keys = `http://127.0.0.1:${ports.keys}`;
    rag = `http://127.0.0.1:${ports.rag}`;
    mcp = `http://127.0.0.1:${ports.mcp}/mcp`;
    const env = retrievalEnv(
      stack,
      { ports, dir, workspace, sharedSecret: SHARED_SECRET },
      {
        RAG_PUBLIC_URL: rag,
        CAPTURE_ALLOWED_HOSTS: site.origin.replace('http://', ''),
      },
    );
    platform = await startServices([keysService, ragService, mcpService], env, testLogger());
    acme = await mintKey(keys, SHARED_SECRET, 'pro', 'acme');
    expect(
      (
        await call('POST', '/api/rag/setup', {
          key: acme.apiKey,
          body: { projectPath: join(workspace, 'ui-kit'), collectionName: 'ui-kit' },
        })
      ).status,
    ).to.equal(200);
    const indexed = await call('POST', '/api/rag/index', { key: acme.apiKey, body: { collectionName: 'ui-kit', wait: true } });
    expect(indexed.body.status, JSON.stringify(indexed.body)).to.equal('completed');
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    await site?.close();
    for (const s of broken) await s.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // Every answer of this spec, checked against the answering face's OpenAPI document.
  useContractCheck();

  async function call(method: string, path: string, options: { key?: string; body?: unknown } = {}): Promise<Answer> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (options.key) headers['x-api-key'] = options.key;
    const res = await fetch(`${rag}${path}`, {
      method,
      headers,
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
    const text = await res.text();
    const body = res.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as Record<string, unknown>) : {};
    return { status: res.status, headers: res.headers, body, text };
  }

  const validate = (body: Record<string, unknown>) =>
    call('POST', '/api/integration/validate', { key: acme.apiKey, body: { collectionName: 'ui-kit', ...body } });
  const generate = (body: Record<string, unknown>) =>
    call('POST', '/api/integration/generate', { key: acme.apiKey, body: { collectionName: 'ui-kit', ...body } });
  const checksOf = (a: Answer) => a.body.checks as CheckBody[];

  /** The fixture served from a copy with a bug put in: what a generated test must catch. */
  async function brokenSite(name: string, path: string, from: string, to: string): Promise<UiKitSite> {
    const copy = uiKitCopy(dir, name);
    breakFile(copy, path, from, to);
    const started = await startUiKitSite(copy);
    broken.push(started);
    return started;
  }

  describe('validate', () => {
    it("finds the component's file and lines, checks the live page, and passes what the page does", async () => {
      const before = site.cartRequests.length;
      const answer = await validate({
        component: 'AddToCartButton',
        url: `${site.origin}/`,
        expectedBehavior:
          'It is visible. It is labelled "Add to cart". Clicking it opens the "Added to cart" dialog. It posts to /api/cart. It throws an Error when the productId is missing.',
      });
      expect(answer.status, answer.text).to.equal(200);
      const checks = checksOf(answer);
      expect(
        checks.map((c) => c.status),
        JSON.stringify(checks, null, 1),
      ).to.deep.equal(['passed', 'passed', 'passed', 'passed', 'passed']);
      expect(answer.body.valid).to.equal(true);
      expect(answer.body.confidence).to.equal(1);
      const evidence = answer.body.evidence as EvidenceBody[];
      const definition = evidence.find((e) => e.role === 'definition');
      // Its doc comment belongs to it: lines 3-28 of the file.
      expect(definition, JSON.stringify(evidence)).to.include({
        source: 'code',
        file: 'src/components/add-to-cart-button.js',
        startLine: 3,
        endLine: 28,
      });
      expect(definition!.snippet).to.include('export function AddToCartButton');
      expect(
        evidence.some((e) => e.role === 'use' && e.file === 'src/shop.js'),
        'its use in shop.js',
      ).to.equal(true);
      expect(evidence.find((e) => e.source === 'page' && e.role === 'element')?.selector).to.equal('[data-testid="add-to-cart"]');
      expect(site.cartRequests.length - before, 'the click really posted').to.equal(1);
      expect(site.cartRequests.at(-1)).to.deep.equal({ productId: 'sku-42', quantity: 1 });
    });

    it('fails a behaviour the page does not have, naming what happened instead', async () => {
      const answer = await validate({
        component: 'AddToCartButton',
        url: `${site.origin}/`,
        expectedBehavior: 'It is visible. Clicking it navigates to /checkout.html.',
      });
      expect(answer.status, answer.text).to.equal(200);
      const [visible, navigates] = checksOf(answer);
      expect(visible!.status).to.equal('passed');
      expect(navigates!.status).to.equal('failed');
      expect(navigates!.detail).to.equal('a click did not navigate');
      expect(answer.body.valid).to.equal(false);
    });

    it('leaves what the evidence cannot decide unknown, and valid null rather than a guess', async () => {
      const answer = await validate({
        component: 'AddToCartButton',
        url: `${site.origin}/`,
        expectedBehavior: 'It is visible. Customers find it delightful.',
      });
      expect(answer.status, answer.text).to.equal(200);
      expect(checksOf(answer).map((c) => c.status)).to.deep.equal(['passed', 'unknown']);
      expect(checksOf(answer)[1]!.decidedBy).to.equal(null);
      expect(answer.body.valid).to.equal(null);
      expect(answer.body.confidence).to.equal(0.5);
      expect(answer.body.judgedByModel).to.deep.equal([]);
    });

    it("decides state and code claims: a disabled button, a link's navigation, a thrown error type", async () => {
      const coupon = await validate({
        component: 'CouponButton',
        url: `${site.origin}/`,
        expectedBehavior: 'It is disabled. It reads "Apply coupon".',
      });
      expect(
        checksOf(coupon).map((c) => c.status),
        coupon.text,
      ).to.deep.equal(['passed', 'passed']);
      const link = await validate({
        component: 'CheckoutLink',
        url: `${site.origin}/`,
        expectedBehavior: 'Clicking it navigates to /checkout.html.',
      });
      expect(checksOf(link)[0], link.text).to.include({ status: 'passed' });
      const clamp = await validate({
        component: 'clampQuantity',
        expectedBehavior: 'It throws a RangeError when the quantity is negative. It throws a SyntaxError. It is visible.',
      });
      expect(
        checksOf(clamp).map((c) => c.status),
        clamp.text,
      ).to.deep.equal(['passed', 'failed', 'unknown']);
      expect(checksOf(clamp)[2]!.detail).to.include('pass url');
    });

    it('refuses bad input with 400 and an unknown collection with 404, and a private page with 400', async () => {
      expect((await validate({ component: '', expectedBehavior: 'x' })).status).to.equal(400);
      const missing = await call('POST', '/api/integration/validate', {
        key: acme.apiKey,
        body: { component: 'X', expectedBehavior: 'It is visible.', collectionName: 'nope' },
      });
      expect(missing.status).to.equal(404);
      const metadata = await validate({
        component: 'AddToCartButton',
        expectedBehavior: 'It is visible.',
        url: 'http://169.254.169.254/latest/meta-data/',
      });
      expect(metadata.status, metadata.text).to.equal(400);
      expect(metadata.body.code).to.equal('BLOCKED_URL');
    });
  });

  describe('generate', () => {
    it('writes unit tests that run and pass against the fixture, and fail after a deliberate bug', async () => {
      const answer = await generate({ component: 'clampQuantity', testType: 'unit', coverage: 'comprehensive' });
      expect(answer.status, answer.text).to.equal(200);
      const body = answer.body as unknown as GenerateBody;
      expect(body.framework).to.equal('mocha');
      const spec = body.files[0]!;
      expect(spec.content).to.not.match(/TODO/i);
      const good = uiKitCopy(dir, 'unit-good');
      writeGenerated(good, body.files);
      const passing = await runMocha(good, spec.path);
      expect(passing.code, passing.output).to.equal(0);
      expect(passing.output).to.include(`${body.cases.length} passing`);
      const bad = uiKitCopy(dir, 'unit-bad');
      writeGenerated(bad, body.files);
      breakFile(bad, 'src/cart/quantity.js', 'quantity < 0', 'quantity < -1');
      const failing = await runMocha(bad, spec.path);
      expect(failing.code, failing.output).to.not.equal(0);
      expect(failing.output).to.match(/\d+ failing/);
    });

    it('writes a Playwright e2e test from the live page that passes, and fails when the dialog no longer opens', async () => {
      const answer = await generate({ component: 'AddToCartButton', testType: 'e2e', coverage: 'comprehensive', url: `${site.origin}/` });
      expect(answer.status, answer.text).to.equal(200);
      const body = answer.body as unknown as GenerateBody;
      expect(body.framework).to.equal('playwright');
      const spec = body.files[0]!;
      expect(spec.content).to.include('page.getByTestId("add-to-cart")');
      expect(spec.content).to.include('page.getByRole(\'dialog\', { name: "Added to cart" })');
      const good = uiKitCopy(dir, 'e2e-good');
      writeGenerated(good, body.files);
      const passing = await runPlaywright(good, spec.path);
      expect(passing.code, passing.output).to.equal(0);
      expect(passing.output).to.include(`${body.cases.length} passed`);
      const buggy = await brokenSite('e2e-site-bad', 'src/components/add-to-cart-button.js', '?.showModal()', '?.close()');
      const failing = await runPlaywright(good, spec.path, `${buggy.origin}/`);
      expect(failing.code, failing.output).to.not.equal(0);
      expect(failing.output).to.match(/1 failed/);
    });

    it("writes a visual test with its baseline that passes, and fails when the button's colour changes", async () => {
      const answer = await generate({ component: 'AddToCartButton', testType: 'visual', coverage: 'basic', url: `${site.origin}/` });
      expect(answer.status, answer.text).to.equal(200);
      const body = answer.body as unknown as GenerateBody;
      const [spec, baseline] = body.files;
      expect(spec!.content).to.include('toHaveScreenshot');
      expect(baseline!.encoding).to.equal('base64');
      expect(Buffer.from(baseline!.content, 'base64').subarray(1, 4).toString()).to.equal('PNG');
      const good = uiKitCopy(dir, 'visual-good');
      writeGenerated(good, body.files);
      const passing = await runPlaywright(good, spec!.path);
      expect(passing.code, passing.output).to.equal(0);
      const buggy = await brokenSite('visual-site-bad', 'public/index.html', 'background: #0b5394', 'background: #9b1c1c');
      const failing = await runPlaywright(good, spec!.path, `${buggy.origin}/`);
      expect(failing.code, failing.output).to.not.equal(0);
      expect(failing.output).to.match(/pixels? \(ratio [\d.]+ of all image pixels\) (are|is) different|Screenshot comparison failed/);
    });

    it('refuses e2e without a url and a component that is not in the code', async () => {
      expect((await generate({ component: 'AddToCartButton', testType: 'e2e' })).status).to.equal(400);
      const unknown = await generate({ component: 'NoSuchThing', testType: 'unit' });
      expect(unknown.status, unknown.text).to.equal(404);
      expect(unknown.body.code).to.equal('COMPONENT_NOT_FOUND');
    });
  });

  describe('without collectionName', () => {
    const PAGE_ONLY = 'It is visible. It is labelled "Add to cart". Clicking it opens the "Added to cart" dialog.';
    /** Collection names of other customers: no answer to these callers may hold them. */
    const FOREIGN = ['ui-kit', 'rival-secret-kit'];
    let bare: MintedKey;
    let multi: MintedKey;

    before(async () => {
      bare = await mintKey(keys, SHARED_SECRET, 'pro', 'bare');
      multi = await mintKey(keys, SHARED_SECRET, 'pro', 'multi');
      const rival = await mintKey(keys, SHARED_SECRET, 'team', 'rival');
      const project = join(workspace, 'ui-kit');
      for (const [key, collectionName] of [
        [multi.apiKey, 'kit-south'],
        [multi.apiKey, 'kit-north'],
        [rival.apiKey, 'rival-secret-kit'],
      ] as const) {
        const setup = await call('POST', '/api/rag/setup', { key, body: { projectPath: project, collectionName } });
        expect(setup.status, setup.text).to.equal(200);
      }
    });

    const post = (key: string, operation: 'validate' | 'generate', body: Record<string, unknown>) =>
      call('POST', `/api/integration/${operation}`, { key, body });
    const connect = async (apiKey: string): Promise<Client> => {
      const client = new Client({ name: 'integration-e2e', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(mcp), { requestInit: { headers: { 'x-api-key': apiKey } } }));
      clients.push(client);
      return client;
    };
    const callTool = async (client: Client, name: string, args: Record<string, unknown>): Promise<ToolAnswer> =>
      (await client.callTool({ name, arguments: args })) as ToolAnswer;
    const toolText = (answer: ToolAnswer): string => answer.content.map((c) => c.text ?? '').join('\n');
    const mentionsNoForeign = (text: string) => {
      for (const name of FOREIGN) expect(text, `another customer's ${name}`).to.not.include(name);
    };

    it('validates and generates from the page alone for a customer with no collection, and says what code needs', async () => {
      const url = `${site.origin}/`;
      const validated = await post(bare.apiKey, 'validate', { component: 'AddToCartButton', expectedBehavior: PAGE_ONLY, url });
      expect(validated.status, validated.text).to.equal(200);
      expect(checksOf(validated).map((c) => c.status)).to.deep.equal(['passed', 'passed', 'passed']);
      expect(validated.body.valid).to.equal(true);
      const sources = (validated.body.evidence as EvidenceBody[]).map((e) => e.source);
      expect(sources).to.include('page').and.not.include('code');
      expect(validated.body.issues).to.include(
        'no code evidence: you have no collection of code: set one up over your project (POST /api/rag/setup or the rag_setup tool) and index it',
      );

      // A sentence only the code decides is left unknown, saying why, while the page's are decided.
      const mixed = await post(bare.apiKey, 'validate', {
        component: 'AddToCartButton',
        expectedBehavior: 'It is visible. It throws an Error when the productId is missing.',
        url,
      });
      expect(mixed.status, mixed.text).to.equal(200);
      const [visible, throws] = checksOf(mixed);
      expect(visible!.status).to.equal('passed');
      expect(throws).to.include({ status: 'unknown', decidedBy: null });
      expect(throws!.detail).to.match(/^a check of the code, and no code was read: you have no collection of code/);

      const generated = await post(bare.apiKey, 'generate', { component: 'AddToCartButton', testType: 'e2e', url });
      expect(generated.status, generated.text).to.equal(200);
      const body = generated.body as unknown as GenerateBody;
      expect(body.framework).to.equal('playwright');
      expect(body.files[0]!.content).to.include('page.getByTestId("add-to-cart")');
      expect(generated.body.source).to.equal(null);

      // What cannot be done without code is refused, saying how to set a collection up.
      for (const [operation, body, instead] of [
        ['validate', { component: 'clampQuantity', expectedBehavior: 'It throws a RangeError.' }, /or pass url/],
        ['generate', { component: 'clampQuantity', testType: 'unit' }, /or generate e2e or visual tests from the live page/],
      ] as const) {
        const refused = await post(bare.apiKey, operation, body);
        expect(refused.status, `${operation}: ${refused.text}`).to.equal(409);
        expect(refused.body).to.deep.include({ success: false, code: 'NO_COLLECTION', collections: [] });
        expect(refused.body.error)
          .to.match(/^you have no collection of code: set one up/)
          .and.match(instead);
        mentionsNoForeign(refused.text);
      }
    });

    it("reads the caller's only collection when none is named", async () => {
      const validated = await post(acme.apiKey, 'validate', {
        component: 'clampQuantity',
        expectedBehavior: 'It throws a RangeError when the quantity is negative.',
      });
      expect(validated.status, validated.text).to.equal(200);
      expect(checksOf(validated).map((c) => c.status)).to.deep.equal(['passed']);
      expect((validated.body.evidence as EvidenceBody[]).find((e) => e.role === 'definition')).to.include({
        file: 'src/cart/quantity.js',
      });
      // With a page too, its code is evidence beside the page's.
      const withPage = await post(acme.apiKey, 'validate', {
        component: 'AddToCartButton',
        expectedBehavior: PAGE_ONLY,
        url: `${site.origin}/`,
      });
      expect(withPage.status, withPage.text).to.equal(200);
      expect((withPage.body.evidence as EvidenceBody[]).find((e) => e.role === 'definition')).to.include({
        file: 'src/components/add-to-cart-button.js',
      });
      const generated = await post(acme.apiKey, 'generate', { component: 'clampQuantity', testType: 'unit' });
      expect(generated.status, generated.text).to.equal(200);
      expect(generated.body.source).to.include({ file: 'src/cart/quantity.js' });
    });

    it("asks which of several collections to read, naming the caller's own and no one else's", async () => {
      const url = `${site.origin}/`;
      for (const [operation, body] of [
        ['validate', { component: 'clampQuantity', expectedBehavior: 'It throws a RangeError.' }],
        ['validate', { component: 'AddToCartButton', expectedBehavior: 'It is visible. It takes a productId parameter.', url }],
        ['generate', { component: 'clampQuantity', testType: 'unit' }],
        ['generate', { component: 'clampQuantity', testType: 'integration' }],
      ] as const) {
        const refused = await post(multi.apiKey, operation, body);
        expect(refused.status, `${operation}: ${refused.text}`).to.equal(409);
        expect(refused.body).to.deep.include({ success: false, code: 'COLLECTION_AMBIGUOUS', collections: ['kit-north', 'kit-south'] });
        expect(refused.body.error).to.equal(
          "you have 2 collections (kit-north, kit-south): name the one that holds the component's code in collectionName",
        );
        mentionsNoForeign(refused.text);
      }
      // Page-only work needs none of them, and says which to name for code evidence.
      const validated = await post(multi.apiKey, 'validate', { component: 'AddToCartButton', expectedBehavior: PAGE_ONLY, url });
      expect(validated.status, validated.text).to.equal(200);
      expect(validated.body.valid).to.equal(true);
      expect(validated.body.issues).to.include(
        'no code evidence: you have 2 collections (kit-north, kit-south): name one in collectionName for code evidence',
      );
      mentionsNoForeign(validated.text);
      const generated = await post(multi.apiKey, 'generate', { component: 'AddToCartButton', testType: 'visual', url });
      expect(generated.status, generated.text).to.equal(200);
      // Named, it is that collection (not indexed yet, so 409 saying so).
      const named = await post(multi.apiKey, 'generate', { component: 'clampQuantity', testType: 'unit', collectionName: 'kit-north' });
      expect(named.status, named.text).to.equal(409);
      expect(named.body.code).to.equal('NOT_INDEXED');
    });

    it('does the same through the MCP tools', async () => {
      const url = `${site.origin}/`;
      const bareClient = await connect(bare.apiKey);
      const pageOnly = await callTool(bareClient, 'integration_validate', {
        component: 'AddToCartButton',
        expectedBehavior: PAGE_ONLY,
        url,
      });
      expect(pageOnly.isError, toolText(pageOnly)).to.not.equal(true);
      expect(pageOnly.structuredContent).to.include({ valid: true });
      expect(toolText(pageOnly)).to.include('issue: no code evidence: you have no collection of code');
      const e2e = await callTool(bareClient, 'integration_generate', { component: 'AddToCartButton', testType: 'e2e', url });
      expect(e2e.isError, toolText(e2e)).to.not.equal(true);
      expect(e2e.structuredContent).to.include({ framework: 'playwright', source: null });
      const noCode = await callTool(bareClient, 'integration_validate', { component: 'clampQuantity', expectedBehavior: 'It throws.' });
      expect(noCode.isError).to.equal(true);
      expect(noCode.structuredContent).to.deep.include({ code: 'NO_COLLECTION', collections: [] });
      expect(toolText(noCode)).to.match(/set one up .*rag_setup/);
      const report = await callTool(bareClient, 'integration_report', { projectName: 'bare' });
      expect(report.isError, toolText(report)).to.not.equal(true);
      expect((report.structuredContent!.report as { collections: unknown[] }).collections).to.deep.equal([]);

      const acmeClient = await connect(acme.apiKey);
      const implicit = await callTool(acmeClient, 'integration_generate', { component: 'clampQuantity', testType: 'unit' });
      expect(implicit.isError, toolText(implicit)).to.not.equal(true);
      expect(implicit.structuredContent!.source).to.include({ file: 'src/cart/quantity.js' });
      const validated = await callTool(acmeClient, 'integration_validate', {
        component: 'clampQuantity',
        expectedBehavior: 'It throws a RangeError when the quantity is negative.',
      });
      expect(
        (validated.structuredContent!.checks as CheckBody[]).map((c) => c.status),
        toolText(validated),
      ).to.deep.equal(['passed']);

      const multiClient = await connect(multi.apiKey);
      for (const [name, args] of [
        ['integration_validate', { component: 'clampQuantity', expectedBehavior: 'It throws a RangeError.' }],
        ['integration_generate', { component: 'clampQuantity', testType: 'unit' }],
      ] as const) {
        const refused = await callTool(multiClient, name, args);
        expect(refused.isError, name).to.equal(true);
        expect(refused.structuredContent).to.deep.include({ code: 'COLLECTION_AMBIGUOUS', collections: ['kit-north', 'kit-south'] });
        expect(toolText(refused)).to.include('you have 2 collections (kit-north, kit-south)');
        mentionsNoForeign(JSON.stringify(refused));
      }
      const multiPage = await callTool(multiClient, 'integration_validate', {
        component: 'AddToCartButton',
        expectedBehavior: PAGE_ONLY,
        url,
      });
      expect(multiPage.isError, toolText(multiPage)).to.not.equal(true);
      mentionsNoForeign(JSON.stringify(multiPage));
    });
  });

  describe('report', () => {
    it('counts what the events say, in json, markdown and a self-contained html page', async () => {
      const customer = await mintKey(keys, SHARED_SECRET, 'pro', 'report');
      const key = customer.apiKey;
      const workspace = join(dir, 'workspace', 'ui-kit');
      expect((await call('POST', '/api/rag/setup', { key, body: { projectPath: workspace, collectionName: 'kit' } })).status).to.equal(200);
      const indexed = await call('POST', '/api/rag/index', { key, body: { collectionName: 'kit', wait: true } });
      expect(indexed.body.status).to.equal('completed');
      for (const query of ['clamp quantity', 'clamp quantity', 'price format']) {
        expect((await call('POST', '/api/rag/query', { key, body: { collectionName: 'kit', query } })).status).to.equal(200);
      }
      const v1 = await call('POST', '/api/integration/validate', {
        key,
        body: { collectionName: 'kit', component: 'clampQuantity', expectedBehavior: 'It throws a RangeError.' },
      });
      const v2 = await call('POST', '/api/integration/validate', {
        key,
        body: { collectionName: 'kit', component: 'clampQuantity', expectedBehavior: 'It is fast.' },
      });
      expect([v1.body.valid, v2.body.valid]).to.deep.equal([true, null]);
      const g = await call('POST', '/api/integration/generate', {
        key,
        body: { collectionName: 'kit', component: 'formatPrice', testType: 'unit' },
      });
      expect(g.status, g.text).to.equal(200);

      const report = await call('POST', '/api/integration/report', { key, body: { projectName: 'UI kit' } });
      expect(report.status, report.text).to.equal(200);
      const r = report.body as {
        metrics: {
          indexing: { runs: number; completed: number; filesIndexed: number };
          queries: { count: number; cached: number; cacheHitRate: number };
        };
        validations: { count: number; valid: number; undecided: number };
        generations: { count: number; cases: number };
        collections: Array<{ collectionName: string; files: number }>;
      };
      expect(r.collections.map((c) => c.collectionName)).to.deep.equal(['kit']);
      expect(r.metrics.indexing).to.include({ runs: 1, completed: 1, filesIndexed: indexed.body.filesIndexed as number });
      expect(r.metrics.queries).to.include({ count: 3, cached: 1 });
      expect(r.metrics.queries.cacheHitRate).to.be.closeTo(1 / 3, 1e-9);
      expect(r.validations).to.include({ count: 2, valid: 1, undecided: 1 });
      expect(r.generations).to.include({ count: 1, cases: (g.body.cases as unknown[]).length });

      const markdown = await call('POST', '/api/integration/report', { key, body: { projectName: 'UI kit', format: 'markdown' } });
      expect(markdown.headers.get('content-type')).to.match(/^text\/markdown/);
      expect(markdown.text).to.include('UI kit');
      const html = await call('POST', '/api/integration/report', { key, body: { projectName: 'UI kit', format: 'html' } });
      expect(html.headers.get('content-type')).to.match(/^text\/html/);
      expect(html.headers.get('cache-control')).to.include('no-store');
      expect(html.text).to.include('<svg').and.to.include("default-src 'none'");
      expect(html.text).to.not.match(/https?:\/\//);
    });

    it('is behind the gate: no key 401, a free key 403 subscription required', async () => {
      expect((await call('POST', '/api/integration/report', { body: { projectName: 'x' } })).status).to.equal(401);
      const free = await mintKey(keys, SHARED_SECRET, 'free', 'free');
      const refused = await call('POST', '/api/integration/validate', {
        key: free.apiKey,
        body: { component: 'x', expectedBehavior: 'y' },
      });
      expect(refused.status).to.equal(403);
    });
  });
});
