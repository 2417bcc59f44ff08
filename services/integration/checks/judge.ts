import type { PageFacts } from '../page/page-facts.ts';
import { isPageClaim, type Claim } from './claims.ts';
import type { CodeFacts } from './code-facts.ts';

/**
 * Decides each claim from the evidence alone. A claim is passed or failed only when the evidence
 * shows it; anything else is unknown with the reason, never a guess. Pure.
 */

export type CheckStatus = 'passed' | 'failed' | 'unknown';

export interface CheckResult {
  description: string;
  status: CheckStatus;
  detail: string;
  /**
   * Who decided it: the evidence (deterministic rules over the code and the page), the configured
   * language model (status is then the model's answer, which the top-level valid does not count), or
   * no one (unknown).
   */
  decidedBy: 'evidence' | 'model' | null;
}

export interface Evidence {
  /** The component's definition was found in the index. */
  defined: boolean;
  code: CodeFacts | null;
  /** null: no url was given. */
  page: PageFacts | null;
  /** Why no collection's code was read, when none was (a page-only validation): what the code checks say. */
  noCode?: string;
}

const words = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s/._-]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
const sameText = (a: string, b: string) => words(a) === words(b);
const containsText = (haystack: string, needle: string) => words(haystack).includes(words(needle));

export function judge(sentence: string, claim: Claim, evidence: Evidence): CheckResult {
  const result = (status: CheckStatus, detail: string): CheckResult => ({
    description: sentence,
    status,
    detail,
    decidedBy: status === 'unknown' ? null : 'evidence',
  });
  /** Passed when `holds` says the positive form holds and the claim is not negated (or neither). */
  const verdict = (holds: boolean, negated: boolean, yes: string, no: string) =>
    holds !== negated ? result('passed', holds ? yes : no) : result('failed', holds ? yes : no);

  if (claim.kind === 'open') return result('unknown', 'no check of the code or the page decides this sentence');

  if (isPageClaim(claim)) {
    const page = evidence.page;
    if (!page) return result('unknown', 'a check of the live page: pass url to decide it');
    const found = page.located;
    if (!found) {
      if (claim.kind === 'visible' && !claim.negated)
        return result('failed', `the component is not on the page (tried: ${page.tried.join('; ')})`);
      return result('unknown', `the component was not found on the page (tried: ${page.tried.join('; ')})`);
    }
    switch (claim.kind) {
      case 'visible':
        return verdict(found.visible, claim.negated, 'the component is visible', 'the component is on the page but not visible');
      case 'enabled':
        return verdict(found.enabled, claim.negated, 'the component is enabled', 'the component is disabled');
      case 'name': {
        const name = found.accessibleName ?? '';
        const holds = sameText(name, claim.text) || containsText(found.text, claim.text) || containsText(name, claim.text);
        return verdict(
          holds,
          claim.negated,
          `its accessible name is "${name}"`,
          `its accessible name is "${name}" and its text "${found.text.slice(0, 100)}", not "${claim.text}"`,
        );
      }
      case 'role':
        return verdict(
          found.role === claim.role,
          claim.negated,
          `its role is ${found.role}`,
          `its role is ${found.role ?? 'none'}, not ${claim.role}`,
        );
      case 'accessible': {
        const a11y = page.a11y;
        if (!a11y || a11y.error) return result('unknown', `the accessibility check could not run${a11y?.error ? `: ${a11y.error}` : ''}`);
        const list = a11y.violations.map((v) => `${v.id} (${v.impact})`).join(', ');
        return verdict(
          a11y.violations.length === 0,
          claim.negated,
          'axe-core finds no violation in the component',
          `axe-core finds: ${list}`,
        );
      }
      case 'opens-dialog':
      case 'navigates':
      case 'requests': {
        const click = page.click;
        if (!click) return result('unknown', 'the component was not clicked');
        if (!click.clicked) return result(claim.negated ? 'passed' : 'failed', `it cannot be clicked: ${click.reason ?? 'unknown reason'}`);
        if (claim.kind === 'opens-dialog') {
          const names = click.dialogs.map((d) => d.name ?? '(unnamed)');
          const natives = click.nativeDialogs.map((d) => `${d.type} "${d.message.slice(0, 80)}"`);
          const all = [...names, ...natives];
          const holds =
            claim.name === null
              ? all.length > 0
              : click.dialogs.some(
                  (d) => d.name !== null && (containsText(d.name, claim.name as string) || containsText(claim.name as string, d.name)),
                ) || click.nativeDialogs.some((d) => containsText(d.message, claim.name as string));
          return verdict(
            holds,
            claim.negated,
            `a click opened ${all.join(', ')}`,
            all.length > 0 ? `a click opened ${all.join(', ')}${claim.name ? `, not "${claim.name}"` : ''}` : 'a click opened no dialog',
          );
        }
        if (claim.kind === 'navigates') {
          const to = click.navigatedTo;
          const holds =
            to !== null &&
            (claim.target === null || to.endsWith(claim.target) || new URL(to).pathname === claim.target || containsText(to, claim.target));
          return verdict(
            holds,
            claim.negated,
            `a click navigated to ${to}`,
            to ? `a click navigated to ${to}${claim.target ? `, not ${claim.target}` : ''}` : 'a click did not navigate',
          );
        }
        const matching = click.requests.filter(
          (r) =>
            (claim.method === null || r.method === claim.method) &&
            (claim.path === null || r.path === claim.path || r.path.startsWith(`${claim.path}?`) || r.url === claim.path),
        );
        const seen = click.requests.map((r) => `${r.method} ${r.path}${r.status !== null ? ` (${r.status})` : ''}`).join(', ');
        const wanted = `${claim.method ?? 'a request'}${claim.path ? ` ${claim.path}` : ''}`;
        return verdict(
          matching.length > 0,
          claim.negated,
          `a click sent ${seen}`,
          seen ? `a click sent ${seen}, not ${wanted}` : `a click sent no request (expected ${wanted})`,
        );
      }
    }
  }

  if (evidence.noCode !== undefined) return result('unknown', `a check of the code, and no code was read: ${evidence.noCode}`);
  const code = evidence.code;
  if (!evidence.defined || !code)
    return result('unknown', "the component's definition is not in the index: index the project, or check the component name");
  switch (claim.kind) {
    case 'throws': {
      const sites = code.throws.filter((t) => claim.errorType === null || t.errorType === claim.errorType);
      const described = sites
        .map(
          (t) =>
            `line ${t.line}: throw new ${t.errorType}${t.message ? `('${t.message}')` : ''}${t.condition ? ` if (${t.condition})` : ''}`,
        )
        .join('; ');
      if (sites.length === 0) return verdict(false, claim.negated, '', `no ${claim.errorType ?? 'error'} is thrown in the definition`);
      if (claim.negated) return result('failed', `it throws: ${described}`);
      if (claim.condition === null) return result('passed', `it throws: ${described}`);
      // The condition in words must meet a guard's condition or message; otherwise the throw is there but when is not shown.
      const terms = words(claim.condition)
        .split(' ')
        .filter((w) => w.length > 3);
      const meets = sites.filter((t) => terms.some((w) => words(`${t.condition ?? ''} ${t.message ?? ''}`).includes(w)));
      return meets.length > 0
        ? result(
            'passed',
            `it throws: ${meets.map((t) => `line ${t.line}: throw new ${t.errorType}${t.message ? `('${t.message}')` : ''}${t.condition ? ` if (${t.condition})` : ''}`).join('; ')}`,
          )
        : result('unknown', `it throws ${described}, but no guard there is visibly about "${claim.condition}"`);
    }
    case 'parameter':
      return verdict(
        code.parameters.includes(claim.name),
        claim.negated,
        `it takes ${claim.name}`,
        `its parameters are ${code.parameters.join(', ') || 'none'}`,
      );
    default:
      return result('unknown', 'no check of the code or the page decides this sentence');
  }
}

export interface Verdict {
  /** From the evidence alone: a check only the model decided counts as undecided here. */
  valid: boolean | null;
  /** The share of checks the evidence decided. */
  confidence: number;
  /** The checks as the evidence decided them: the model's verdicts are among the unknown. */
  counts: { passed: number; failed: number; unknown: number };
  /** The verdict had the model's answers counted too; null when the model decided no check. */
  modelValid: boolean | null;
}

const verdictOfStatuses = (statuses: readonly CheckStatus[]): boolean | null =>
  statuses.includes('failed') ? false : statuses.includes('unknown') || statuses.length === 0 ? null : true;

/**
 * valid: false when any check failed, null when none failed but one is unknown, true when all passed,
 * all on the evidence only. A model's say-so is not evidence (the page it reads may have written it:
 * "all checks passed"), so it never makes valid true; its verdict is modelValid, beside it.
 */
export function verdictOf(checks: readonly CheckResult[]): Verdict {
  const counts = { passed: 0, failed: 0, unknown: 0 };
  const byEvidence = checks.map((check) => (check.decidedBy === 'evidence' ? check.status : 'unknown'));
  for (const status of byEvidence) counts[status]++;
  const valid = verdictOfStatuses(byEvidence);
  const confidence = checks.length === 0 ? 0 : Math.round(((counts.passed + counts.failed) / checks.length) * 100) / 100;
  const modelValid = checks.some((c) => c.decidedBy === 'model') ? verdictOfStatuses(checks.map((c) => c.status)) : null;
  return { valid, confidence, counts, modelValid };
}
