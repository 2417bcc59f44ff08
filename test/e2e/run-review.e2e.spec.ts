import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { expect } from 'chai';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { projectionCollection } from '../../events/collections.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { mcpService } from '../../services/mcp/mcp.service.ts';
import { baselinesProjection } from '../../services/vision/baselines.projection.ts';
import { snapshotReviewsProjection } from '../../services/vision/snapshot-reviews.projection.ts';
import { ragService } from '../../services/vision-rag/vision-rag.service.ts';
import { chromiumForTests, launchChromiumForTests } from '../integration/vision/chromium-under-test.ts';
import { useContractCheck } from '../support/contract-check.ts';
import { testLogger } from '../support/env.ts';
import { mintKey, retrievalEnv, retrievalPorts } from '../support/retrieval.ts';
import { replayWith } from '../support/replay.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';

const SHARED_SECRET = 'ab'.repeat(32);

interface Snapshot {
  snapshot: string;
  check: string;
  viewport: string | null;
  status: 'passed' | 'failed';
  diffRatio: number | null;
  diffPixels: number | null;
  screenshotId: string;
  screenshotUrl: string;
  baselineId: string | null;
  baselineUrl: string | null;
  diffId: string | null;
  diffUrl: string | null;
  isBaseline: boolean;
  decision: 'accepted' | 'rejected' | null;
}

interface Run {
  runId: string;
  suite: string;
  latest: boolean;
  reportUrl: string;
  snapshots: Snapshot[];
}

interface ToolAnswer {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
}

/** A page whose 40 px box moves with `?at=`: the same page at two viewports, failing at both when it moves. */
function boxSite(): Server {
  return createServer((req, res) => {
    const at = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('at') ?? 0);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html lang="en"><head><title>Box</title>
<style>body{margin:0;background:#fff;font:16px sans-serif} #box{position:absolute;top:100px;left:${10 + at}px;width:40px;height:40px;background:#c00}</style></head>
<body><main><h1 style="margin:0;font-size:20px">Orders</h1><div id="box"></div></main></body></html>`);
  });
}

/** The review of a test run: its page, its JSON, and accepting or rejecting one snapshot, over HTTP and MCP. */
describe('vision RAG: the review page of a test run, and a decision per snapshot (e2e)', function () {
  this.timeout(180_000);
  let platform: RunningPlatform | undefined;
  let site: Server;
  let origin: string;
  let dir: string;
  let rag: string;
  let mcp: string;
  let apiKey: string;
  let otherKey: string;
  let customerId: string;
  let env: NodeJS.ProcessEnv;
  const clients: Client[] = [];

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    chromiumForTests();
    const stack = await useStack();
    site = boxSite();
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-review-`));
    mkdirSync(join(dir, 'workspace'), { recursive: true });
    const ports = await retrievalPorts();
    rag = `http://127.0.0.1:${ports.rag}`;
    mcp = `http://127.0.0.1:${ports.mcp}/mcp`;
    env = retrievalEnv(
      stack,
      { ports, dir, workspace: join(dir, 'workspace'), sharedSecret: SHARED_SECRET },
      { RAG_PUBLIC_URL: rag, CAPTURE_ALLOWED_HOSTS: origin.replace('http://', ''), CAPTURE_TIMEOUT_MS: '30000' },
    );
    platform = await startServices([keysService, ragService, mcpService], env, testLogger());
    const keys = `http://127.0.0.1:${ports.keys}`;
    ({ apiKey, customerId } = await mintKey(keys, SHARED_SECRET, 'pro', 'review'));
    ({ apiKey: otherKey } = await mintKey(keys, SHARED_SECRET, 'pro', 'review-other'));
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    await new Promise<void>((r) => (site ? site.close(() => r()) : r()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // Every answer, the page and the decisions included, checked against the OpenAPI document.
  useContractCheck();

  const suiteNamed = (name: string) => ({
    name,
    viewports: [
      { name: 'phone', width: 200, height: 300 },
      { name: 'desktop', width: 400, height: 300 },
    ],
    checks: [
      { type: 'visual', name: 'page' },
      { type: 'element', name: 'heading', selector: 'h1', text: 'Orders' },
    ],
  });

  const call = async (method: string, path: string, key = apiKey, body?: unknown): Promise<Response> =>
    fetch(`${rag}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const runSuite = async (at: number, name: string): Promise<string> => {
    const res = await call('POST', '/api/glm/test', apiKey, { url: `${origin}/?at=${at}`, testSuite: suiteNamed(name) });
    const body = (await res.json()) as { runId: string };
    expect(res.status, JSON.stringify(body)).to.equal(200);
    return body.runId;
  };
  const getRun = async (runId: string): Promise<Run> => {
    const res = await call('GET', `/api/glm/runs/${runId}`);
    expect(res.status).to.equal(200);
    return (await res.json()) as Run;
  };
  const snap = (run: Run, name: string): Snapshot => {
    const found = run.snapshots.find((s) => s.snapshot === name);
    expect(found, `${name} in ${run.snapshots.map((s) => s.snapshot).join(', ')}`).to.not.equal(undefined);
    return found as Snapshot;
  };
  const decide = (runId: string, snapshot: string, verb: 'accept' | 'reject', key = apiKey) =>
    call('POST', `/api/glm/runs/${runId}/snapshots/${encodeURIComponent(snapshot)}/${verb}`, key);

  it('shows a failing snapshot at two viewports with baseline, capture, diff and slider; accept one, reject another; the next run follows', async () => {
    await runSuite(0, 'review');
    const failingRun = await runSuite(100, 'review');
    const run = await getRun(failingRun);
    expect(run).to.include({ runId: failingRun, suite: 'review', latest: true });
    expect(run.snapshots.map((s) => s.snapshot).sort()).to.deep.equal(['page@desktop', 'page@phone']);
    for (const s of run.snapshots) {
      expect(s, s.snapshot).to.include({ check: 'page', status: 'failed', decision: null, isBaseline: false });
      expect(s.baselineId, 'the baseline it was compared with').to.be.a('string').and.not.equal(s.screenshotId);
      expect(s.diffId).to.be.a('string');
      // The box left 40×40 pixels and covered 40×40 others.
      expect(s.diffPixels).to.be.within(3000, 3300);
      expect(s.diffRatio).to.be.closeTo((s.diffPixels as number) / (s.viewport === 'phone' ? 200 * 300 : 400 * 300), 1e-9);
    }

    const page = await call('GET', `/api/glm/runs/${failingRun}/report`);
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/^text\/html/);
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy)
      .to.match(/default-src 'none'/)
      .and.match(/img-src data:/)
      .and.match(/script-src 'nonce-[A-Za-z0-9+/=]+'/);
    expect(page.headers.get('cache-control')).to.equal('private, no-store');
    const html = await page.text();
    expect(html.match(/<section class="viewport"/g)).to.have.length(2);
    expect(html).to.include('Viewport phone').and.include('Viewport desktop');
    // Three images per snapshot, each inlined once (the slider copies them), and one slider each.
    expect(html.match(/<img id="s\d-(baseline|current|diff)" [^>]*src="data:image\/png;base64,/g)).to.have.length(6);
    expect(html.match(/<input type="range"/g)).to.have.length(2);
    expect(html, 'nothing to fetch').to.not.match(/(src|href)="(?!data:)/);
    const nonce = /'nonce-([^']+)'/.exec(policy)?.[1] as string;
    expect(html.match(/<(script|style)\b[^>]*>/g)).to.deep.equal([`<style nonce="${nonce}">`, `<script nonce="${nonce}">`]);
    // The element check, listed apart.
    expect(html).to.include('heading@phone');

    const accepted = await decide(failingRun, 'page@phone', 'accept');
    expect(accepted.status).to.equal(200);
    const phone = snap(run, 'page@phone');
    expect(await accepted.json()).to.deep.include({ decision: 'accepted', changed: true, baselineId: phone.screenshotId });
    const again = await decide(failingRun, 'page@phone', 'accept');
    expect(await again.json(), 'the same decision twice: nothing new').to.deep.include({ decision: 'accepted', changed: false });
    const rejected = await decide(failingRun, 'page@desktop', 'reject');
    expect(await rejected.json()).to.deep.include({
      decision: 'rejected',
      changed: true,
      baselineId: snap(run, 'page@desktop').baselineId,
    });
    const undo = await decide(failingRun, 'page@phone', 'reject');
    expect(undo.status).to.equal(409);
    expect(((await undo.json()) as { code: string }).code).to.equal('ALREADY_ACCEPTED');
    expect((await decide(failingRun, 'heading@phone', 'accept')).status, 'not a snapshot: an element check').to.equal(404);
    expect((await decide(failingRun, 'nothing@phone', 'reject')).status).to.equal(404);

    const decided = await getRun(failingRun);
    expect(snap(decided, 'page@phone')).to.include({ decision: 'accepted', isBaseline: true });
    expect(snap(decided, 'page@desktop')).to.include({ decision: 'rejected', isBaseline: false });
    const decidedHtml = await (await call('GET', `/api/glm/runs/${failingRun}/report`)).text();
    expect(decidedHtml).to.match(/data-snapshot="page@phone" data-decision="accepted"/);
    expect(decidedHtml).to.match(/data-snapshot="page@desktop" data-decision="rejected"/);

    const nextRun = await runSuite(100, 'review');
    const next = await getRun(nextRun);
    expect(snap(next, 'page@phone'), 'accepted: the moved box is the baseline').to.include({ status: 'passed', diffPixels: 0 });
    expect(snap(next, 'page@phone').baselineId).to.equal(phone.screenshotId);
    expect(snap(next, 'page@desktop'), 'rejected: the old baseline stays').to.include({ status: 'failed' });
    expect(snap(next, 'page@desktop').baselineId).to.equal(snap(run, 'page@desktop').baselineId);

    const stale = await decide(failingRun, 'page@desktop', 'accept');
    expect(stale.status, 'a run that is not the latest').to.equal(409);
    expect(await stale.json()).to.deep.include({ code: 'RUN_SUPERSEDED' });
    expect((await getRun(failingRun)).latest).to.equal(false);
  });

  it('rebuilds the decisions and the baselines they moved from the log alone (replay)', async () => {
    await runSuite(0, 'replayed');
    const runId = await runSuite(100, 'replayed');
    expect((await decide(runId, 'page@phone', 'accept')).status).to.equal(200);
    expect((await decide(runId, 'page@desktop', 'reject')).status).to.equal(200);
    const before = await getRun(runId);
    const rt = (platform as RunningPlatform).runtime;
    for (const projection of [snapshotReviewsProjection, baselinesProjection]) {
      const collection = async () => projectionCollection(rt.mongo.db, projection.collection);
      // What a lost read model looks like: emptied, then rebuilt from the events.
      await (await collection()).deleteMany({});
      const replayed = await replayWith(rt, projection as never);
      expect(replayed.applied, projection.name).to.be.greaterThan(0);
    }
    const after = await getRun(runId);
    expect(after.snapshots).to.deep.equal(before.snapshots);
    expect(snap(after, 'page@phone')).to.include({ decision: 'accepted', isBaseline: true });
    expect(snap(after, 'page@desktop')).to.include({ decision: 'rejected', isBaseline: false });
  });

  it("answers another customer's run with 404 everywhere, revealing nothing", async () => {
    const runId = await runSuite(0, 'private');
    for (const res of [
      await call('GET', `/api/glm/runs/${runId}`, otherKey),
      await call('GET', `/api/glm/runs/${runId}/report`, otherKey),
      await decide(runId, 'page@phone', 'accept', otherKey),
      await decide(runId, 'page@phone', 'reject', otherKey),
    ]) {
      expect(res.status).to.equal(404);
      const text = await res.text();
      expect(text).to.not.include('private').and.not.include('page@');
    }
    expect((await call('GET', '/api/glm/runs/not-a-run')).status).to.equal(404);
    // The list of runs is each customer's own: theirs holds none of these, ours has this one first.
    const theirs = (await (await call('GET', '/api/glm/runs', otherKey)).json()) as { runs: { runId: string }[] };
    expect(theirs.runs).to.deep.equal([]);
    const ours = (await (await call('GET', '/api/glm/runs?limit=2')).json()) as {
      runs: { runId: string; suite: string; reportUrl: string }[];
    };
    expect(ours.runs[0]).to.deep.include({ runId, suite: 'private', reportUrl: `/api/glm/runs/${runId}/report` });
    expect(ours.runs.length).to.be.at.most(2);
    expect((await call('GET', '/api/glm/runs?limit=500')).status).to.equal(400);
    // Untouched by the attempts.
    expect(snap(await getRun(runId), 'page@phone').decision).to.equal(null);
  });

  it('renders in Chromium under its policy with no error, its slider moving the clip', async () => {
    await runSuite(0, 'render');
    const runId = await runSuite(100, 'render');
    const html = await (await call('GET', `/api/glm/runs/${runId}/report`)).text();
    const browser = await launchChromiumForTests();
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      const errors: string[] = [];
      const requests: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('request', (r) => {
        if (!r.url().startsWith('data:')) requests.push(r.url());
      });
      await page.route('**/*', (route) => (route.request().url().startsWith('data:') ? route.continue() : route.abort()));
      await page.setContent(html, { waitUntil: 'load' });
      expect(await page.locator('section.viewport').count()).to.equal(2);
      const slider = page.locator('.slider').first();
      // The script copied the images into the slider (it ran: its nonce let it).
      expect(
        await slider.locator('img').evaluateAll((imgs) => imgs.map((i) => (i as unknown as { naturalWidth: number }).naturalWidth > 0)),
      ).to.deep.equal([true, true]);
      await slider.locator('input').fill('20');
      expect(await slider.locator('.over').evaluate((e) => (e as unknown as { style: { clipPath: string } }).style.clipPath)).to.equal(
        'inset(0px 80% 0px 0px)',
      );
      expect(errors).to.deep.equal([]);
      expect(requests).to.deep.equal([]);
    } finally {
      await browser.close();
    }
  });

  it('reads a run and decides on its snapshots as MCP tools, with the same effect', async () => {
    const connect = async (key: string): Promise<Client> => {
      const client = new Client({ name: 'review-e2e', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(mcp), { requestInit: { headers: { 'x-api-key': key } } }));
      clients.push(client);
      return client;
    };
    const client = await connect(apiKey);
    const tool = async (name: string, args: Record<string, unknown>, on = client): Promise<ToolAnswer> =>
      (await on.callTool({ name, arguments: args })) as ToolAnswer;
    const test = async (at: number) => {
      const answer = await tool('glm_test', { url: `${origin}/?at=${at}`, testSuite: suiteNamed('tools') });
      expect(answer.isError, JSON.stringify(answer.content)).to.not.equal(true);
      return answer.structuredContent as { runId: string };
    };
    await test(0);
    const { runId } = await test(100);
    const read = await tool('glm_run', { runId });
    const run = read.structuredContent as unknown as Run;
    expect(run.reportUrl).to.equal(`${rag}/api/glm/runs/${runId}/report`);
    expect(run.snapshots.map((s) => [s.snapshot, s.status])).to.have.deep.members([
      ['page@phone', 'failed'],
      ['page@desktop', 'failed'],
    ]);
    // The review page and each snapshot's capture, baseline and diff come as resource links too (issue 40).
    const links = (read.content as { type: string; uri?: string; mimeType?: string }[]).filter((c) => c.type === 'resource_link');
    expect(links[0]).to.include({ uri: run.reportUrl, mimeType: 'text/html' });
    const images = run.snapshots
      .flatMap((s) => [s.screenshotUrl, s.baselineUrl, s.diffUrl])
      .filter((u): u is string => typeof u === 'string');
    expect(links.slice(1).map((l) => l.uri)).to.have.members(images);
    expect(images.length).to.be.greaterThan(2);
    expect((await tool('glm_review', { runId, snapshot: 'page@desktop', decision: 'accepted' })).structuredContent).to.deep.include({
      changed: true,
      decision: 'accepted',
    });
    expect((await tool('glm_review', { runId, snapshot: 'page@phone', decision: 'rejected' })).structuredContent).to.deep.include({
      changed: true,
      decision: 'rejected',
    });
    const decided = (await tool('glm_run', { runId })).structuredContent as unknown as Run;
    expect(decided.snapshots.map((s) => [s.snapshot, s.decision])).to.have.deep.members([
      ['page@phone', 'rejected'],
      ['page@desktop', 'accepted'],
    ]);

    const next = await test(100);
    const nextRun = (await tool('glm_run', { runId: next.runId })).structuredContent as unknown as Run;
    expect(nextRun.snapshots.map((s) => [s.snapshot, s.status])).to.have.deep.members([
      ['page@phone', 'failed'],
      ['page@desktop', 'passed'],
    ]);
    const stale = await tool('glm_review', { runId, snapshot: 'page@phone', decision: 'accepted' });
    expect(stale.isError).to.equal(true);
    expect(stale.structuredContent).to.deep.include({ code: 'RUN_SUPERSEDED' });

    const other = await connect(otherKey);
    for (const answer of [
      await tool('glm_run', { runId: next.runId }, other),
      await tool('glm_review', { runId: next.runId, snapshot: 'page@phone', decision: 'accepted' }, other),
    ]) {
      expect(answer.isError).to.equal(true);
      expect(answer.structuredContent).to.deep.include({ code: 'NOT_FOUND' });
    }
  });

  it('`svc vision test` prints the review page’s URL, and writes the page with --out', async () => {
    const suiteFile = join(dir, 'cli-suite.json');
    const out = join(dir, 'review.html');
    const svc = async (at: number) => {
      writeFileSync(suiteFile, JSON.stringify({ url: `${origin}/?at=${at}`, testSuite: suiteNamed('cli') }));
      return promisify(execFile)(
        process.execPath,
        ['--disable-warning=TimeoutNegativeWarning', 'app/cli/svc.ts', 'vision', 'test', suiteFile, '--customer', customerId, '--out', out],
        { env: { ...process.env, ...env }, timeout: 120_000 },
      ).then(
        (r) => ({ code: 0, stdout: r.stdout }),
        (err: { code: number; stdout: string }) => ({ code: err.code, stdout: err.stdout }),
      );
    };
    expect((await svc(0)).code).to.equal(0);
    const failing = await svc(100);
    expect(failing.code, 'a failed check').to.equal(1);
    const printed = JSON.parse(failing.stdout) as { runId: string; reportUrl: string; reportFile: string };
    expect(printed.reportUrl).to.equal(`${rag}/api/glm/runs/${printed.runId}/report`);
    expect(printed.reportFile).to.equal(out);
    const html = readFileSync(out, 'utf8');
    expect(html.match(/<section class="viewport"/g)).to.have.length(2);
    expect(html.match(/<input type="range"/g)).to.have.length(2);
    // The run is the customer's: its key reads the same page over HTTP.
    const served = await call('GET', new URL(printed.reportUrl).pathname);
    expect(served.status).to.equal(200);
    expect(await served.text()).to.include(`data-snapshot="page@desktop"`);
  });
});
