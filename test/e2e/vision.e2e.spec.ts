import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { PNG } from 'pngjs';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { ragService } from '../../services/vision-rag/vision-rag.service.ts';
import { zeroPng } from '../integration/vision/bomb-png.ts';
import { chromiumForTests } from '../integration/vision/chromium-under-test.ts';
import { startFixtureSite, type FixtureSite } from '../integration/vision/fixture-site.ts';
import { eventually, testLogger } from '../support/env.ts';
import { mintKey, retrievalEnv, retrievalPorts, type MintedKey } from '../support/retrieval.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { useContractCheck } from '../support/contract-check.ts';

const SHARED_SECRET = 'ab'.repeat(32);
const run = promisify(execFile);
const PRICING_URL = 'https://svc.example/pricing';

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  bytes: Buffer;
}

interface FindingBody {
  type: string;
  severity: string;
  message: string;
  selector?: string;
}

/** A white PNG with a dark bar at the top: an image given only by URL. */
function imagePng(): Buffer {
  const png = new PNG({ width: 400, height: 600 });
  for (let y = 0; y < 600; y++) {
    for (let x = 0; x < 400; x++) {
      const i = (y * 400 + x) * 4;
      const dark = y < 60 ? 20 : 255;
      png.data[i] = png.data[i + 1] = png.data[i + 2] = dark;
      png.data[i + 3] = 255;
    }
  }
  return PNG.sync.write(png);
}

/** The vision operations end to end: real browser, real stack, fixture pages on 127.0.0.1. */
describe('vision RAG, part 2: page capture, analysis and visual tests (e2e)', function () {
  this.timeout(240_000);
  let stack: StackEnv;
  let platform: RunningPlatform;
  let site: FixtureSite;
  let images: Server;
  let imageOrigin: string;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let rag: string;
  let keys: string;
  const minted: Record<string, MintedKey> = {};

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    chromiumForTests();
    stack = await useStack();
    site = await startFixtureSite();
    const png = imagePng();
    const bomb = await zeroPng(10_000, 10_000);
    images = createServer((req, res) => {
      if (req.url === '/shot.png') res.writeHead(200, { 'content-type': 'image/png' }).end(png);
      else if (req.url === '/bomb.png') res.writeHead(200, { 'content-type': 'image/png' }).end(bomb);
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => images.listen(0, '127.0.0.1', r));
    imageOrigin = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-vision-`));
    mkdirSync(join(dir, 'workspace'), { recursive: true });
    const ports = await retrievalPorts();
    keys = `http://127.0.0.1:${ports.keys}`;
    rag = `http://127.0.0.1:${ports.rag}`;
    env = retrievalEnv(
      stack,
      { ports, dir, workspace: join(dir, 'workspace'), sharedSecret: SHARED_SECRET },
      {
        PRICING_URL,
        RAG_PUBLIC_URL: rag,
        // Only the fixture site and the image server: every other private address stays refused.
        CAPTURE_ALLOWED_HOSTS: `127.0.0.1:${site.port},${imageOrigin.replace('http://', '')}`,
        CAPTURE_TIMEOUT_MS: '30000',
      },
    );
    platform = await startServices([keysService, ragService], env, testLogger());
    for (const [name, tier] of [
      ['acme', 'pro'],
      ['globex', 'team'],
      ['free', 'free'],
    ] as const)
      minted[name] = await mintKey(keys, SHARED_SECRET, tier, name);
  });

  after(async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    await site?.close();
    await new Promise<void>((r) => (images ? images.close(() => r()) : r()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // Every answer of this spec, checked against the answering face's OpenAPI document.
  useContractCheck();

  const call = async (method: string, path: string, options: { key?: string; body?: unknown } = {}): Promise<Answer> => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (options.key) headers['x-api-key'] = options.key;
    const res = await fetch(path.startsWith('http') ? path : `${rag}${path}`, {
      method,
      headers,
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    const json = res.headers.get('content-type')?.includes('json') ? (JSON.parse(bytes.toString('utf8')) as Record<string, unknown>) : {};
    return { status: res.status, headers: res.headers, body: json, bytes };
  };
  const acme = () => minted.acme!.apiKey;
  const usage = async (apiKey: string) =>
    ((await (await fetch(`${keys}/usage`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as { usage: Record<string, number> })
      .usage;
  const analyze = (body: Record<string, unknown>, key = acme()) => call('POST', '/api/glm/analyze', { key, body });
  const findings = (a: Answer) => a.body.findings as FindingBody[];
  const typesOf = (a: Answer) => new Set(findings(a).map((f) => f.type));

  it('says the vision feature works here and gates every operation: 401, 403 with upgrade, 403 subscription required', async () => {
    const health = await call('GET', '/health');
    expect((health.body.features as Record<string, boolean>).glmVision).to.equal(true);
    const operations: [string, string, unknown][] = [
      ['POST', '/api/glm/capture', { url: `${site.origin}/analysis/clean` }],
      ['POST', '/api/glm/analyze', { url: `${site.origin}/analysis/clean`, analysisType: 'layout' }],
      ['POST', '/api/glm/test', { url: `${site.origin}/analysis/clean`, testSuite: { name: 's', checks: [{ type: 'a11y', name: 'a' }] } }],
      ['POST', '/api/glm/baselines/s/accept', undefined],
      ['GET', '/api/glm/screenshots/00000000-0000-4000-8000-000000000000', undefined],
    ];
    for (const [method, path, body] of operations) {
      expect((await call(method, path, { body })).status, `${path} without a key`).to.equal(401);
      const invalid = await call(method, path, { key: `svc_${'Z'.repeat(33)}`, body });
      expect(invalid.status, path).to.equal(403);
      expect(invalid.body).to.include({ upgrade: PRICING_URL });
      const free = await call(method, path, { key: minted.free!.apiKey, body });
      expect(free.status, path).to.equal(403);
      expect(free.body).to.include({ error: 'subscription required', upgrade: PRICING_URL });
    }
  });

  it('captures a page, stores the PNG for its customer only, and refuses addresses the policy forbids', async () => {
    const shot = await call('POST', '/api/glm/capture', {
      key: acme(),
      body: { url: `${site.origin}/analysis/clean`, viewport: { width: 1024, height: 700 } },
    });
    expect(shot.status, JSON.stringify(shot.body)).to.equal(200);
    expect(shot.body).to.include({ success: true, width: 1024, height: 700, title: 'Analysis fixture: a well-built page' });
    expect(shot.body.screenshotUrl).to.equal(`${rag}/api/glm/screenshots/${String(shot.body.screenshotId)}`);
    const png = await call('GET', String(shot.body.screenshotUrl), { key: acme() });
    expect(png.status).to.equal(200);
    expect(png.headers.get('content-type')).to.equal('image/png');
    const decoded = PNG.sync.read(png.bytes);
    expect([decoded.width, decoded.height]).to.deep.equal([1024, 700]);
    expect((await call('GET', String(shot.body.screenshotUrl), { key: minted.globex!.apiKey })).status).to.equal(404);

    for (const url of [
      `${site.origin}/redirect-metadata`,
      'http://169.254.169.254/latest/meta-data/',
      `http://127.0.0.1:${site.forbiddenPort}/`,
      'file:///etc/passwd',
    ]) {
      const refused = await call('POST', '/api/glm/capture', { key: acme(), body: { url } });
      expect(refused.status, url).to.equal(400);
      expect(refused.body).to.include({ success: false });
    }
    // A page whose sub-resources reach for a private address loads without them.
    const leaky = await call('POST', '/api/glm/capture', { key: acme(), body: { url: `${site.origin}/leaky` } });
    expect(leaky.status).to.equal(200);
    expect(leaky.body.blockedRequests).to.be.greaterThan(0);
    expect(site.forbiddenConnections()).to.equal(0);
  });

  it("finds each analysis type's defects on the defective page, nothing on the clean one, and meters each analysis", async () => {
    const before = await usage(acme());
    const defects = `${site.origin}/analysis/defects`;
    const ui = await analyze({ url: defects, analysisType: 'ui-elements' });
    expect(ui.status, JSON.stringify(ui.body)).to.equal(200);
    expect(findings(ui).filter((f) => f.type === 'interactive-element').length).to.be.greaterThan(3);
    expect(findings(ui).some((f) => f.severity === 'serious')).to.equal(true); // the unlabeled button

    const layout = await analyze({ screenshotId: ui.body.screenshotId, analysisType: 'layout' });
    for (const type of ['overlap', 'small-tap-target', 'off-screen', 'viewport-overflow']) expect(typesOf(layout), type).to.include(type);

    const a11y = await analyze({
      screenshotUrl: `${rag}/api/glm/screenshots/${String(ui.body.screenshotId)}`,
      analysisType: 'accessibility',
    });
    for (const type of ['axe:image-alt', 'axe:color-contrast']) expect(typesOf(a11y), type).to.include(type);

    const visual = await analyze({ screenshotId: ui.body.screenshotId, analysisType: 'visual-bugs' });
    for (const type of ['broken-image', 'clipped-text']) expect(typesOf(visual), type).to.include(type);

    const all = await analyze({ screenshotId: ui.body.screenshotId, analysisType: 'comprehensive' });
    for (const type of ['overlap', 'axe:image-alt', 'broken-image']) expect(typesOf(all), type).to.include(type);

    const clean = await analyze({ url: `${site.origin}/analysis/clean`, analysisType: 'comprehensive' });
    expect(
      findings(clean).filter((f) => f.severity !== 'minor'),
      JSON.stringify(findings(clean).filter((f) => f.severity !== 'minor')),
    ).to.deep.equal([]);

    await eventually('six analyses metered', async () => {
      const now = await usage(acme());
      return now.screenshotsAnalyzed === (before.screenshotsAnalyzed ?? 0) + 6 ? now : undefined;
    });
    // Another customer cannot analyse this one's screenshot.
    const other = await analyze({ screenshotId: ui.body.screenshotId, analysisType: 'layout' }, minted.globex!.apiKey);
    expect(other.status).to.equal(404);
  });

  it('runs the image-level checks on an image given only by URL, and says which checks did not run', async () => {
    const image = await analyze({ screenshotUrl: `${imageOrigin}/shot.png`, analysisType: 'comprehensive' });
    expect(image.status, JSON.stringify(image.body)).to.equal(200);
    expect(image.body.screenshotId).to.equal(null);
    expect(typesOf(image)).to.include('blank-region');
    expect((image.body.skipped as unknown[]).length).to.be.greaterThan(0);
    const notImage = await analyze({ screenshotUrl: `${site.origin}/analysis/clean`, analysisType: 'visual-bugs' });
    expect(notImage.status).to.equal(422);
    expect(notImage.body).to.include({ code: 'NOT_AN_IMAGE' });
  });

  it('meters a capture, refuses an image over the pixel limit with 413, and deletes a screenshot on request', async () => {
    const before = await usage(acme());
    const shot = await call('POST', '/api/glm/capture', { key: acme(), body: { url: `${site.origin}/analysis/clean` } });
    expect(shot.status, JSON.stringify(shot.body)).to.equal(200);
    await eventually('the capture metered', async () => {
      const now = await usage(acme());
      return now.screenshotsAnalyzed === (before.screenshotsAnalyzed ?? 0) + 1 ? now : undefined;
    });

    const bomb = await analyze({ screenshotUrl: `${imageOrigin}/bomb.png`, analysisType: 'visual-bugs' });
    expect(bomb.status, JSON.stringify(bomb.body)).to.equal(413);
    expect(bomb.body).to.include({ success: false, code: 'IMAGE_TOO_LARGE' });

    const id = String(shot.body.screenshotId);
    expect((await call('DELETE', `/api/glm/screenshots/${id}`, { key: minted.globex!.apiKey })).status, "another customer's").to.equal(404);
    const deleted = await call('DELETE', `/api/glm/screenshots/${id}`, { key: acme() });
    expect(deleted.status).to.equal(200);
    expect(deleted.body).to.include({ success: true, deleted: id });
    expect((await call('GET', String(shot.body.screenshotUrl), { key: acme() })).status).to.equal(404);
  });

  it('records a baseline on the first run, passes on the same page, fails on a changed one with a diff, and accepts the change', async () => {
    const suite = {
      name: 'settings',
      viewport: { width: 1024, height: 700 },
      checks: [
        { type: 'visual', name: 'page' },
        { type: 'element', name: 'heading', selector: 'h1', text: 'Account' },
        { type: 'element', name: 'no-ghost', selector: '#does-not-exist' },
        { type: 'a11y', name: 'a11y', maxImpact: 'moderate' },
        { type: 'layout', name: 'layout' },
      ],
    };
    const run = (url: string) => call('POST', '/api/glm/test', { key: acme(), body: { url, testSuite: suite } });
    const first = await run(`${site.origin}/analysis/clean`);
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    const byName = (a: Answer) =>
      Object.fromEntries((a.body.results as { name: string; status: string; message: string; diffUrl?: string }[]).map((r) => [r.name, r]));
    expect(byName(first).page).to.include({ status: 'passed' });
    expect(byName(first).page!.message).to.match(/baseline/);
    expect(byName(first).heading).to.include({ status: 'passed' });
    expect(byName(first)['no-ghost']).to.include({ status: 'failed' });
    expect(byName(first).a11y).to.include({ status: 'passed' });
    expect(byName(first).layout).to.include({ status: 'passed' });

    const same = await run(`${site.origin}/analysis/clean`);
    expect(byName(same).page).to.include({ status: 'passed' });
    const changed = await run(`${site.origin}/analysis/clean-changed`);
    expect(byName(changed).page).to.include({ status: 'failed' });
    const diff = await call('GET', byName(changed).page!.diffUrl!, { key: acme() });
    expect(diff.status).to.equal(200);
    expect(PNG.sync.read(diff.bytes).width).to.equal(1024);
    expect((await call('GET', byName(changed).page!.diffUrl!, { key: minted.globex!.apiKey })).status).to.equal(404);

    const accepted = await call('POST', '/api/glm/baselines/settings/accept', { key: acme() });
    expect(accepted.status).to.equal(200);
    expect(accepted.body.accepted).to.have.length(1);
    expect(byName(await run(`${site.origin}/analysis/clean-changed`)).page).to.include({ status: 'passed' });
    // Baselines are the customer's: another customer's first run records its own.
    const theirs = await call('POST', '/api/glm/test', {
      key: minted.globex!.apiKey,
      body: { url: `${site.origin}/analysis/defects`, testSuite: suite },
    });
    expect(byName(theirs).page!.message).to.match(/baseline/);
    expect(byName(theirs).a11y).to.include({ status: 'failed' });
    expect(byName(theirs).layout).to.include({ status: 'failed' });
  });

  it('answers bad input with a clear 400 and a JSON body', async () => {
    const cases: [string, unknown, RegExp][] = [
      ['/api/glm/capture', { url: 'ftp://example.com' }, /http/],
      ['/api/glm/capture', { url: `${site.origin}/analysis/clean`, viewport: { width: 10, height: 10 } }, /viewport/],
      ['/api/glm/analyze', { url: `${site.origin}/analysis/clean`, analysisType: 'vibes' }, /analysisType/],
      ['/api/glm/analyze', { analysisType: 'layout' }, /exactly one/],
      ['/api/glm/test', { url: `${site.origin}/analysis/clean`, testSuite: { name: 'x', checks: [] } }, /empty/],
      ['/api/glm/test', { url: `${site.origin}/analysis/clean`, testSuite: { name: 'x', checks: [{ type: 'nope', name: 'n' }] } }, /type/],
    ];
    for (const [path, body, message] of cases) {
      const res = await call('POST', path, { key: acme(), body });
      expect(res.status, `${path} ${JSON.stringify(body)}`).to.equal(400);
      expect(res.body.error).to.match(message);
    }
    const missing = await call('POST', '/api/glm/capture', {
      key: acme(),
      body: { url: `${site.origin}/analysis/clean`, selector: '#nothing-here' },
    });
    expect(missing.status).to.equal(422);
    expect(missing.body).to.include({ code: 'SELECTOR_NOT_FOUND' });
  });

  it('`svc vision capture` and `svc vision test` print what the API answers, with exit codes', async () => {
    const svc = (...args: string[]) =>
      run(process.execPath, ['--disable-warning=TimeoutNegativeWarning', 'app/cli/svc.ts', 'vision', ...args], {
        env: { ...process.env, ...env },
        timeout: 120_000,
      }).then(
        (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
        (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
      );
    const out = join(dir, 'cli.png');
    const shot = await svc('capture', `${site.origin}/analysis/clean`, '--out', out);
    expect(shot.code, shot.stderr).to.equal(0);
    expect(JSON.parse(shot.stdout)).to.include({ success: true, file: out, width: 1280, height: 800 });
    expect(PNG.sync.read(readFileSync(out)).width).to.equal(1280);

    const suiteFile = join(dir, 'suite.json');
    writeFileSync(
      suiteFile,
      JSON.stringify({
        url: `${site.origin}/analysis/defects`,
        testSuite: { name: 'cli', checks: [{ type: 'a11y', name: 'a11y', maxImpact: 'moderate' }] },
      }),
    );
    const failing = await svc('test', suiteFile);
    expect(failing.code).to.equal(1);
    expect(JSON.parse(failing.stdout)).to.include({ success: true, suite: 'cli', passed: 0, failed: 1 });
    const refused = await svc('capture', 'http://169.254.169.254/');
    expect(refused.code).to.equal(64);
    expect(refused.stderr).to.match(/BLOCKED_URL/);
    expect((await svc('test', join(dir, 'missing.json'))).code).to.equal(64);
  });
});
