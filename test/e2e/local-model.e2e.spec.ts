import { mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import { startLocalModel, type LocalModel } from '../../deploy/local/llm/local-model.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { askModel } from '../../services/integration/llm/model-judge.ts';
import { keysService } from '../../services/keys/keys.service.ts';
import { ragService } from '../../services/vision-rag/vision-rag.service.ts';
import { chromiumForTests } from '../integration/vision/chromium-under-test.ts';
import { useContractCheck } from '../support/contract-check.ts';
import { testLogger } from '../support/env.ts';
import { mintKey, retrievalEnv, retrievalPorts, type MintedKey } from '../support/retrieval.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';
import { startUiKitSite, type UiKitSite } from '../support/ui-kit-site.ts';

const SHARED_SECRET = 'ef'.repeat(32);

interface CheckBody {
  description: string;
  status: 'passed' | 'failed' | 'unknown';
  detail: string;
  decidedBy: string | null;
}

/**
 * The language-model judge against a real model: SmolLM2-135M-Instruct run by llama.cpp on the CPU
 * behind deploy/local/llm/server.ts (OpenAI-compatible), the client the service uses with any hosted
 * model. What is asserted is the contract, not the small model's wisdom: every check asked about
 * comes back judged in the schema, the model's say-so is marked and never makes `valid`, and a
 * validation with the model finishes within a bounded time. How often this model agrees with the
 * deterministic checks is measured by `npm run bench:judge`, not asserted.
 */
describe('integration validate with a real local language model (e2e)', function () {
  this.timeout(240_000);
  let llm: LocalModel;
  let platform: RunningPlatform;
  let site: UiKitSite;
  let dir: string;
  let rag: string;
  let customer: MintedKey;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    chromiumForTests();
    const stack = await useStack();
    llm = await startLocalModel({ contextSize: 4096 });
    site = await startUiKitSite();
    dir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-local-model-`));
    const ports = await retrievalPorts();
    rag = `http://127.0.0.1:${ports.rag}`;
    const env = retrievalEnv(
      stack,
      { ports, dir, workspace: dir, sharedSecret: SHARED_SECRET },
      {
        RAG_PUBLIC_URL: rag,
        CAPTURE_ALLOWED_HOSTS: site.origin.replace('http://', ''),
        LLM_URL: llm.url,
        LLM_MODEL: llm.model,
        LLM_TIMEOUT_MS: '120000',
      },
    );
    platform = await startServices([keysService, ragService], env, testLogger());
    customer = await mintKey(`http://127.0.0.1:${ports.keys}`, SHARED_SECRET, 'pro', 'judge');
  });

  after(async () => {
    await platform?.runtime.mongo.db.dropDatabase().catch(() => undefined);
    await platform?.stop();
    await site?.close();
    await llm?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  useContractCheck();

  it('answers every check it is asked about, in the schema, and nothing else', async () => {
    const answer = await askModel(
      { url: llm.url, model: llm.model, apiKey: undefined, timeoutMs: 120_000 },
      {
        component: 'AddToCartButton',
        context: null,
        evidence: [{ kind: 'page element', text: 'getByTestId("add-to-cart"): <button> button "Add to cart" (visible, enabled)' }],
        checks: [
          { index: 2, description: 'It is visible' },
          { index: 5, description: 'It reads "Add to cart"' },
        ],
      },
    );
    expect(answer.problem, answer.problem).to.equal(undefined);
    // Under the schema's grammar the model names each asked check once; it may only say "unknown".
    for (const judged of answer.judged) {
      expect([2, 5]).to.include(judged.index);
      expect(['passed', 'failed']).to.include(judged.status);
      expect(judged.reason).to.be.a('string');
    }
    expect(new Set(answer.judged.map((j) => j.index)).size).to.equal(answer.judged.length);
  });

  it('answers a request it cannot serve with a 400 that says why, as OpenAI does', async () => {
    const post = (body: unknown) =>
      fetch(`${llm.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const empty = await post({ messages: [] });
    expect(empty.status).to.equal(400);
    expect(((await empty.json()) as { error: { code: string } }).error.code).to.equal('invalid_request');
    // Far more than the 4096 tokens of this server's context: refused before any generation.
    const long = await post({ messages: [{ role: 'user', content: 'word '.repeat(6000) }] });
    expect(long.status).to.equal(400);
    const error = ((await long.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).to.equal('context_length_exceeded');
    expect(error.message).to.match(/this model's context holds 4096/);
  });

  it("judges the sentence the evidence leaves open on a live page; valid stays the evidence's", async () => {
    const res = await fetch(`${rag}/api/integration/validate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': customer.apiKey },
      body: JSON.stringify({
        component: 'AddToCartButton',
        url: `${site.origin}/`,
        expectedBehavior: 'It is visible. Shoppers understand at once what it does.',
      }),
    });
    const body = (await res.json()) as {
      checks: CheckBody[];
      valid: boolean | null;
      modelValid: boolean | null;
      judgedByModel: string[];
      issues: string[];
    };
    expect(res.status, JSON.stringify(body)).to.equal(200);
    const [visible, open] = body.checks;
    expect(visible).to.include({ status: 'passed', decidedBy: 'evidence' });
    expect(body.issues.filter((i) => i.startsWith('the language model did not judge'))).to.deep.equal([]);
    if (open?.decidedBy === 'model') {
      expect(open.detail).to.match(/^judged by the language model: /);
      expect(body.judgedByModel).to.deep.equal(['Shoppers understand at once what it does']);
      expect(body.modelValid).to.equal(open.status === 'passed');
    } else {
      // The model may say it cannot tell: then the check stays open and nobody decided it.
      expect(open).to.include({ status: 'unknown', decidedBy: null });
      expect(body.judgedByModel).to.deep.equal([]);
    }
    expect(body.valid, 'valid never counts the model').to.equal(null);
  });
});
