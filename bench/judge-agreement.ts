/**
 * How often the language-model judge agrees with the deterministic checks, on the fixture shop page
 * (test/fixtures/ui-kit). Each case is a validation the service runs without a model: the sentences
 * its evidence decides (visible, enabled, label, role, dialog, navigation, request) are then put to
 * the model as the service would put undecided ones (same prompt, same evidence pieces, same client),
 * and its verdict compared with the evidence's. The sentences are true and false in about equal
 * parts, so a model that says "passed" to everything scores about half.
 *
 *   npm run bench:judge
 *
 * The model: LLM_URL / LLM_MODEL when set (any OpenAI-compatible endpoint), else the local one
 * (deploy/local/llm/server.ts over SmolLM2-135M-Instruct). Env: CHROMIUM_PATH as for the service;
 * KAFKA_BROKERS and MONGODB_URI (unset, a throwaway stack is started); BENCH_VERBOSE=1 (each check's
 * evidence detail).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startLocalModel, type LocalModel } from '../deploy/local/llm/local-model.ts';
import { startServices, type RunningPlatform } from '../app/cli/run.ts';
import type { EvidenceItem } from '../services/integration/code/code-evidence.ts';
import { evidencePieces } from '../services/integration/app/model-evidence.ts';
import { askModel } from '../services/integration/llm/model-judge.ts';
import { keysService } from '../services/keys/keys.service.ts';
import { createLogger } from '../services/platform/logger.ts';
import { ragService } from '../services/vision-rag/vision-rag.service.ts';
import { chromiumForTests } from '../test/integration/vision/chromium-under-test.ts';
import { mintKey, retrievalEnv, retrievalPorts } from '../test/support/retrieval.ts';
import { startUiKitSite, type UiKitSite } from '../test/support/ui-kit-site.ts';
import { runMain, stopOnSignals } from './run-main.ts';
import { benchStack, type BenchStack } from './throwaway-stack.ts';

const out = (line: string) => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);

/** Written for the fixture page, true and false; which is which is the evidence's to say, not ours. */
const CASES: Array<{ component: string; sentences: string[] }> = [
  {
    component: 'AddToCartButton',
    sentences: [
      'It is visible.',
      'It is not visible.',
      'It is enabled.',
      'It is disabled.',
      'It is labelled "Add to cart".',
      'It reads "Remove from cart".',
      'It is a button.',
      'It is a link.',
      'Clicking it opens the "Added to cart" dialog.',
      'Clicking it navigates to /checkout.html.',
      'It posts to /api/cart.',
      'It does not post to /api/cart.',
    ],
  },
  {
    component: 'CouponButton',
    sentences: [
      'It is disabled.',
      'It is enabled.',
      'It reads "Apply coupon".',
      'It reads "Remove coupon".',
      'It is visible.',
      'It is a link.',
    ],
  },
  {
    component: 'CheckoutLink',
    sentences: [
      'Clicking it navigates to /checkout.html.',
      'Clicking it navigates to /cart.html.',
      'It is a link.',
      'It is a button.',
      'It reads "Go to checkout".',
      'It reads "Pay now".',
      'It is visible.',
      'It is disabled.',
    ],
  },
];

interface CheckBody {
  description: string;
  status: 'passed' | 'failed' | 'unknown';
  detail: string;
  decidedBy: string | null;
}

async function main(): Promise<void> {
  chromiumForTests();
  const verbose = process.env.BENCH_VERBOSE === '1';
  let stack: BenchStack | undefined;
  let platform: RunningPlatform | undefined;
  let site: UiKitSite | undefined;
  let local: LocalModel | undefined;
  const dir = mkdtempSync(join(resolve('.data'), 'bench-judge-'));
  const cleanup = async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    await site?.close();
    await local?.stop();
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  const removeHandlers = stopOnSignals(cleanup, err);
  try {
    stack = await benchStack({ mongo: true }, err);
    const llm = process.env.LLM_URL
      ? { url: process.env.LLM_URL.replace(/\/$/, ''), model: process.env.LLM_MODEL ?? 'default', apiKey: process.env.LLM_API_KEY }
      : await startLocalModel().then((m) => {
          local = m;
          return { url: m.url, model: m.model, apiKey: undefined };
        });
    site = await startUiKitSite();
    const ports = await retrievalPorts();
    const rag = `http://127.0.0.1:${ports.rag}`;
    const secret = 'ab'.repeat(32);
    // The service runs without a model: its answer is the evidence's alone.
    platform = await startServices(
      [keysService, ragService],
      retrievalEnv(
        stack.env,
        { ports, dir, workspace: dir, sharedSecret: secret },
        { RAG_PUBLIC_URL: rag, CAPTURE_ALLOWED_HOSTS: site.origin.replace('http://', ''), LOG_LEVEL: 'warn' },
      ),
      createLogger('warn'),
    );
    const customer = await mintKey(`http://127.0.0.1:${ports.keys}`, secret, 'team', 'judge-bench');

    out(`judge agreement: model ${llm.model} at ${llm.url}; the fixture shop page ${site.origin}/`);
    const tally = { decided: 0, agree: 0, disagree: 0, abstained: 0, truePassed: 0, trueFailed: 0, passedAgree: 0, failedAgree: 0 };
    let modelMs = 0;
    for (const { component, sentences } of CASES) {
      const res = await fetch(`${rag}/api/integration/validate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': customer.apiKey },
        body: JSON.stringify({ component, url: `${site.origin}/`, expectedBehavior: sentences.join(' ') }),
      });
      const body = (await res.json()) as { checks: CheckBody[]; evidence: EvidenceItem[]; issues: string[] };
      if (res.status !== 200) throw new Error(`validate ${component}: HTTP ${res.status} ${JSON.stringify(body)}`);
      const decided = body.checks.map((c, index) => ({ ...c, index })).filter((c) => c.decidedBy === 'evidence');
      const notFound = body.issues.find((i) => i.startsWith(`${component} was not found on `));
      const started = performance.now();
      const answer = await askModel(
        { ...llm, timeoutMs: 300_000 },
        {
          component,
          context: null,
          evidence: evidencePieces(body.evidence, notFound ? notFound.slice(`${component} was not found on `.length) : null),
          checks: decided.map(({ index, description }) => ({ index, description })),
        },
      );
      modelMs += performance.now() - started;
      if (answer.problem) throw new Error(`the model gave no answer for ${component}: ${answer.problem}`);
      out(`\n${component}: ${decided.length} of ${body.checks.length} sentences decided by the evidence`);
      for (const check of decided) {
        const model = answer.judged.find((j) => j.index === check.index)?.status ?? 'unknown';
        tally.decided++;
        if (check.status === 'passed') tally.truePassed++;
        else tally.trueFailed++;
        if (model === 'unknown') tally.abstained++;
        else if (model === check.status) {
          tally.agree++;
          if (check.status === 'passed') tally.passedAgree++;
          else tally.failedAgree++;
        } else tally.disagree++;
        out(
          `  ${model === check.status ? 'agree   ' : model === 'unknown' ? 'abstain ' : 'DISAGREE'} evidence ${check.status.padEnd(6)} model ${model.padEnd(7)} ${check.description}`,
        );
        if (verbose) out(`           evidence: ${check.detail}`);
      }
    }
    const pct = (n: number, of: number) => (of === 0 ? 'n/a' : `${((100 * n) / of).toFixed(0)}% (${n}/${of})`);
    out(
      `\nall: the model agrees with the evidence on ${pct(tally.agree, tally.decided)} of the decided sentences; ` +
        `disagrees on ${pct(tally.disagree, tally.decided)}, says unknown on ${pct(tally.abstained, tally.decided)}`,
    );
    out(
      `  on what the evidence passed: ${pct(tally.passedAgree, tally.truePassed)}; on what it failed: ${pct(tally.failedAgree, tally.trueFailed)}`,
    );
    out(
      `  baseline "always passed": ${pct(tally.truePassed, tally.decided)}; model time ${(modelMs / 1000).toFixed(1)} s for ${CASES.length} requests`,
    );
  } finally {
    removeHandlers();
    await cleanup();
  }
}

await runMain(main, err);
