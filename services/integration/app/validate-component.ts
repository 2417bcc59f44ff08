import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { newEvent } from '../../../events/envelope.ts';
import { publishAndApply } from '../../../events/own-events.ts';
import { checkQuota, meter } from '../../premium/meter.ts';
import type { Caller } from '../../premium/caller.ts';
import { claimOf, isCodeClaim, needsClick, sentencesOf } from '../checks/claims.ts';
import { codeFacts, type CodeFacts } from '../checks/code-facts.ts';
import { judge, verdictOf, type CheckResult } from '../checks/judge.ts';
import { codeEvidence, type CodeEvidence, type EvidenceItem } from '../code/code-evidence.ts';
import type { ValidationCompleted } from '../events.ts';
import type { ValidateInput } from '../input.ts';
import { askModel } from '../llm/model-judge.ts';
import { examinePage } from '../page/examine-page.ts';
import type { PageFacts } from '../page/page-facts.ts';
import { describeLocator } from '../page/locator-code.ts';
import { validationsProjection } from '../validations.projection.ts';
import { evidencePieces, pageItems } from './model-evidence.ts';
import { codeCollection, type CodeNeed } from './code-collection.ts';
import type { IntegrationDeps } from './deps.ts';

export interface ValidateAnswer {
  success: true;
  validationId: string;
  component: string;
  /** From the evidence only: never true on a language model's say-so (see modelValid). */
  valid: boolean | null;
  /** The share of checks the evidence decided. */
  confidence: number;
  /** What valid would be with the language model's answers counted; null when it decided no check. */
  modelValid: boolean | null;
  evidence: EvidenceItem[];
  checks: CheckResult[];
  issues: string[];
  /** Descriptions of the checks the language model decided (none without LLM_URL). */
  judgedByModel: string[];
}

/** At most this many sentences become checks: a longer text is a specification, not a behaviour. */
const MAX_CHECKS = 30;

const NO_CODE: CodeEvidence = { definitions: [], mentions: [], related: [], items: [] };

/**
 * POST /api/integration/validate and the `integration_validate` tool: does the component do what the
 * sentences say? Code evidence from the collection's index, page evidence from the live page when
 * `url` is given; each sentence one check, decided by the evidence or left unknown (valid: null).
 * Without collectionName, the code is the caller's only collection's; a page-only validation (url, and
 * no sentence only code decides) needs none (services/integration/app/code-collection.ts).
 * With LLM_URL a model may answer the undecided ones: its answers are marked decidedBy "model" and
 * make modelValid, never valid, which a page's own text could otherwise talk into true.
 * Uses one `queries` (the retrieval) and, with a url, one `screenshotsAnalyzed` once the page loaded.
 */
export async function validateComponent(
  deps: IntegrationDeps,
  caller: Caller,
  input: ValidateInput,
  correlationId: string,
): Promise<ValidateAnswer> {
  const started = performance.now();
  const sentences = sentencesOf(input.expectedBehavior).slice(0, MAX_CHECKS);
  const claims = sentences.map(claimOf);
  const need: CodeNeed = !input.url ? 'required' : claims.some(isCodeClaim) ? 'wanted' : 'optional';
  const source = await codeCollection(
    deps.rag,
    caller,
    input.collectionName,
    need,
    'or pass url to validate the component on its live page alone',
  );
  const collection = source.collection;
  if (input.url) checkQuota(deps.rag, caller, 'screenshotsAnalyzed', 1);
  await meter(deps.rag, caller, 'queries', 1, correlationId);

  const code = collection
    ? await codeEvidence(deps.rag.retrieval, collection.collectionId, input.component, input.expectedBehavior)
    : NO_CODE;
  const facts = mergedFacts(code.definitions.map((d) => codeFacts(d.content, d.metadata.startLine)));
  let page: PageFacts | null = null;
  if (input.url) {
    page = await examinePage(
      deps.vision,
      input.url,
      { component: input.component, click: claims.some(needsClick), a11y: true, screenshot: false },
      caller.customerId,
    );
    await meter(deps.rag, caller, 'screenshotsAnalyzed', 1, correlationId);
  }

  const noCode = source.collection ? undefined : source.why;
  const evidence = { defined: code.definitions.length > 0, code: facts, page, ...(noCode !== undefined ? { noCode } : {}) };
  const checks = sentences.map((sentence, i) => judge(sentence, claims[i] ?? { kind: 'open' }, evidence));
  const issues = issuesOf(input.component, noCode ?? code.definitions.length, page);
  const judgedByModel: string[] = [];
  const undecided = checks
    .map((c, index) => ({ index, description: c.description, status: c.status }))
    .filter((c) => c.status === 'unknown');
  if (deps.llm && undecided.length > 0) {
    const answer = await askModel(deps.llm, {
      component: input.component,
      context: input.context ?? null,
      evidence: evidencePieces([...code.items, ...pageItems(page)], page && !page.located ? page.finalUrl : null),
      checks: undecided.map(({ index, description }) => ({ index, description })),
    });
    if (answer.problem) issues.push(`the language model did not judge the undecided checks: ${answer.problem}`);
    for (const judged of answer.judged) {
      const check = checks[judged.index];
      if (!check) continue;
      checks[judged.index] = {
        ...check,
        status: judged.status,
        detail: `judged by the language model: ${judged.reason}`,
        decidedBy: 'model',
      };
      judgedByModel.push(check.description);
    }
  }

  const verdict = verdictOf(checks);
  if (judgedByModel.length > 0 && verdict.valid !== false) {
    issues.push(
      `valid counts the evidence only: ${judgedByModel.length} of the checks ${judgedByModel.length === 1 ? 'was' : 'were'} decided by the language model alone (decidedBy "model"), whose verdict is modelValid`,
    );
  }
  const items = [...code.items, ...pageItems(page)];
  const validationId = randomUUID();
  const event: ValidationCompleted = newEvent(
    'integration.validation-completed',
    {
      validationId,
      customerId: caller.customerId,
      keyHash: caller.keyHash,
      component: input.component,
      collectionName: collection?.collectionName ?? null,
      url: input.url ?? null,
      valid: verdict.valid,
      confidence: verdict.confidence,
      checks: verdict.counts,
      judgedByModel: judgedByModel.length,
      codeEvidence: code.items.length,
      pageEvidence: items.length - code.items.length,
      durationMs: Math.round(performance.now() - started),
    },
    { correlationId },
  );
  await publishAndApply(deps.rag.publisher, deps.rag.db, validationsProjection, [event]);
  return {
    success: true,
    validationId,
    component: input.component,
    valid: verdict.valid,
    confidence: verdict.confidence,
    modelValid: verdict.modelValid,
    evidence: items,
    checks,
    issues,
    judgedByModel,
  };
}

function mergedFacts(all: CodeFacts[]): CodeFacts | null {
  if (all.length === 0) return null;
  return { throws: all.flatMap((f) => f.throws), parameters: [...new Set(all.flatMap((f) => f.parameters))] };
}

/** `definitions` is the count found in the index, or why no index was read. */
function issuesOf(component: string, definitions: number | string, page: PageFacts | null): string[] {
  const issues: string[] = [];
  if (typeof definitions === 'string') issues.push(`no code evidence: ${definitions}`);
  else if (definitions === 0) issues.push(`no definition of ${component} was found in the collection's index`);
  else if (definitions > 1) issues.push(`${component} is defined ${definitions} times; the checks read all of them`);
  if (page) {
    const found = page.located;
    if (!found) issues.push(`${component} was not found on ${page.finalUrl}`);
    else {
      if (found.count > 1)
        issues.push(`${found.count} elements on the page match ${describeLocator(found.locator)}; the first was checked`);
      if (!found.visible) issues.push(`${component} is on the page but not visible`);
      for (const v of page.a11y?.violations ?? []) issues.push(`accessibility (${v.impact}): ${v.help} [${v.id}]`);
      if (page.a11y?.error) issues.push(`the accessibility check could not run: ${page.a11y.error}`);
    }
  }
  return issues;
}
