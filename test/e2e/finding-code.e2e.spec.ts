import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { expect } from 'chai';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { mcpService } from '../../services/mcp/mcp.service.ts';
import { ragService } from '../../services/vision-rag/vision-rag.service.ts';
import { chromiumForTests } from '../integration/vision/chromium-under-test.ts';
import { useContractCheck } from '../support/contract-check.ts';
import { testLogger } from '../support/env.ts';
import { shopWithPhotoDefect } from '../support/finding-code-fixtures.ts';
import { mintKey, retrievalEnv, retrievalPorts, type MintedKey } from '../support/retrieval.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { startUiKitSite, type UiKitSite } from '../support/ui-kit-site.ts';

const SHARED_SECRET = 'ef'.repeat(32);

interface CodeLinkBody {
  file: string;
  startLine: number;
  endLine: number;
  score: number;
}

interface FindingBody {
  type: string;
  selector?: string;
  code?: CodeLinkBody[];
}

interface AnalyzeBody {
  findings: FindingBody[];
  codeLinks: { collectionName: string | null; findingsLinked: number; reason?: string };
}

/**
 * Findings traced to code, end to end: the ui-kit shop with a product photo that has no alt, indexed
 * for real as one customer's collection, served on 127.0.0.1 and analysed through the HTTP face. A
 * rival customer's collection of the same name holds every test id of the page in a decoy file: it
 * must never be searched for the shop's owner, nor the owner's for the rival.
 */
describe('vision: findings name the code that renders their element (e2e)', function () {
  this.timeout(300_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let site: UiKitSite;
  let dir: string;
  let shopDir: string;
  let rag: string;
  let mcp: string;
  let acme: MintedKey;
  let rival: MintedKey;
  let solo: MintedKey;

  async function call(path: string, key: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${rag}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  async function indexed(key: string, collectionName: string, projectPath: string): Promise<void> {
    expect((await call('/api/rag/setup', key, { projectPath, collectionName })).status).to.equal(200);
    const done = await call('/api/rag/index', key, { collectionName, wait: true });
    expect(done.body.status, JSON.stringify(done.body)).to.equal('completed');
  }

  async function analyze(key: string, extra: Record<string, unknown> = {}): Promise<AnalyzeBody> {
    const res = await call('/api/glm/analyze', key, { url: `${site.origin}/`, analysisType: 'comprehensive', ...extra });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body as unknown as AnalyzeBody;
  }

  const filesOf = (answer: AnalyzeBody) => new Set(answer.findings.flatMap((f) => (f.code ?? []).map((c) => c.file)));

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    chromiumForTests();
    stack = await useStack();
    dir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-finding-code-`));
    const workspace = join(dir, 'workspace');
    shopDir = shopWithPhotoDefect(join(workspace, 'shop'));
    // The rival's project: every test id and class of the shop page, in one file of its own.
    mkdirSync(join(workspace, 'rival', 'src'), { recursive: true });
    writeFileSync(
      join(workspace, 'rival', 'src', 'decoy.js'),
      "export const ids = ['product-photo', 'add-to-cart', 'apply-coupon', 'checkout-link', 'added-dialog', 'btn-primary'];\n" +
        'export const photo = \'<img class="product-photo" data-testid="product-photo">\';\n',
    );
    mkdirSync(join(workspace, 'notes'), { recursive: true });
    writeFileSync(join(workspace, 'notes', 'README.md'), '# Notes\n\nNothing of the shop.\n');
    site = await startUiKitSite(shopDir);
    const ports = await retrievalPorts();
    rag = `http://127.0.0.1:${ports.rag}`;
    mcp = `http://127.0.0.1:${ports.mcp}/mcp`;
    const env = retrievalEnv(
      stack,
      { ports, dir, workspace, sharedSecret: SHARED_SECRET },
      { RAG_PUBLIC_URL: rag, CAPTURE_ALLOWED_HOSTS: site.origin.replace('http://', '') },
    );
    platform = await startServices([keysService, ragService, mcpService], env, testLogger());
    const keys = `http://127.0.0.1:${ports.keys}`;
    acme = await mintKey(keys, SHARED_SECRET, 'pro', 'acme');
    rival = await mintKey(keys, SHARED_SECRET, 'pro', 'rival');
    solo = await mintKey(keys, SHARED_SECRET, 'pro', 'solo');
    await indexed(acme.apiKey, 'shop', shopDir);
    await indexed(rival.apiKey, 'shop', join(workspace, 'rival'));
  });

  after(async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    await site?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // Every answer of this spec, checked against the face's OpenAPI document.
  useContractCheck();

  it("names the photo component for the missing-alt finding, from the caller's only collection", async () => {
    const answer = await analyze(acme.apiKey);
    expect(answer.codeLinks.collectionName).to.equal('shop');
    expect(answer.codeLinks.findingsLinked).to.be.greaterThan(0);
    const missingAlt = answer.findings.find((f) => f.type === 'axe:image-alt');
    expect(missingAlt, JSON.stringify(answer.findings.map((f) => f.type))).to.not.equal(undefined);
    const named = (missingAlt!.code ?? []).map((c) => c.file);
    expect(named, JSON.stringify(missingAlt)).to.include('src/components/product-photo.js');
    expect(named.length).to.be.at.most(3);
    const addToCart = answer.findings.find((f) => f.type === 'interactive-element' && f.selector === '[data-testid="add-to-cart"]');
    expect(addToCart?.code?.[0]?.file, JSON.stringify(addToCart)).to.equal('src/components/add-to-cart-button.js');
    for (const f of answer.findings)
      for (const c of f.code ?? []) {
        expect(c.startLine).to.be.at.least(1);
        expect(c.endLine).to.be.at.least(c.startLine);
        expect(c.score).to.be.within(0, 1);
      }
    // Only the caller's own files: each exists in the shop, and the rival's decoy is never named.
    for (const file of filesOf(answer)) expect(existsSync(join(shopDir, file)), file).to.equal(true);
    expect([...filesOf(answer)]).to.not.include('src/decoy.js');
  });

  it('the glm_analyze tool answers the same links, and names the top file in its text', async () => {
    const client = new Client({ name: 'finding-code-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcp), { requestInit: { headers: { 'x-api-key': acme.apiKey } } }));
    try {
      const answer = (await client.callTool({
        name: 'glm_analyze',
        arguments: { url: `${site.origin}/`, analysisType: 'accessibility', collectionName: 'shop' },
      })) as { isError?: boolean; content: { text?: string }[]; structuredContent?: AnalyzeBody };
      const text = answer.content.map((c) => c.text ?? '').join('\n');
      expect(answer.isError, text).to.not.equal(true);
      const missingAlt = answer.structuredContent?.findings.find((f) => f.type === 'axe:image-alt');
      expect((missingAlt?.code ?? []).map((c) => c.file)).to.include('src/components/product-photo.js');
      expect(text).to.match(/image-alt.*→ src\/components\/product-photo\.js:\d+-\d+/);
    } finally {
      await client.close();
    }
  });

  it("searches only the caller's collection: the rival's links name its own file, never the shop's", async () => {
    const answer = await analyze(rival.apiKey, { collectionName: 'shop' });
    expect(answer.codeLinks.collectionName).to.equal('shop');
    expect([...filesOf(answer)]).to.deep.equal(['src/decoy.js']);
  });

  it("a collection named that is only another customer's is not found", async () => {
    await indexed(rival.apiKey, 'rival-only', join(dir, 'workspace', 'notes'));
    const res = await call('/api/glm/analyze', acme.apiKey, {
      url: `${site.origin}/`,
      analysisType: 'accessibility',
      collectionName: 'rival-only',
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(404);
  });

  it('no collection: no links, and the answer says why', async () => {
    const answer = await analyze(solo.apiKey, { analysisType: 'accessibility' });
    expect(answer.findings.some((f) => f.type === 'axe:image-alt')).to.equal(true);
    expect(answer.findings.every((f) => f.code === undefined)).to.equal(true);
    expect(answer.codeLinks.collectionName).to.equal(null);
    expect(answer.codeLinks.findingsLinked).to.equal(0);
    expect(answer.codeLinks.reason).to.match(/no collection of code/);
  });

  it('several collections and none named: no links and why; named, the links', async () => {
    await indexed(acme.apiKey, 'notes', join(dir, 'workspace', 'notes'));
    const unnamed = await analyze(acme.apiKey, { analysisType: 'accessibility' });
    expect(unnamed.findings.every((f) => f.code === undefined)).to.equal(true);
    expect(unnamed.codeLinks.collectionName).to.equal(null);
    expect(unnamed.codeLinks.reason).to.match(/2 collections \(notes, shop\).*collectionName/);
    const named = await analyze(acme.apiKey, { analysisType: 'accessibility', collectionName: 'shop' });
    const missingAlt = named.findings.find((f) => f.type === 'axe:image-alt');
    expect((missingAlt?.code ?? []).map((c) => c.file)).to.include('src/components/product-photo.js');
  });
});
