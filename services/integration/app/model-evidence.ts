import type { EvidenceItem } from '../code/code-evidence.ts';
import type { EvidencePiece } from '../llm/model-judge.ts';
import { describeLocator } from '../page/locator-code.ts';
import type { PageFacts } from '../page/page-facts.ts';

/** What a validation shows of the live page, and how the language model is handed the evidence. */

/** The located element and what a click on it did, as evidence items of the answer. */
export function pageItems(page: PageFacts | null): EvidenceItem[] {
  const found = page?.located;
  if (!page || !found) return [];
  const state = [found.visible ? 'visible' : 'hidden', found.enabled ? 'enabled' : 'disabled'].join(', ');
  const items: EvidenceItem[] = [
    {
      source: 'page',
      selector: describeLocator(found.locator),
      role: 'element',
      snippet: `<${found.tag}> ${found.role ?? 'no role'} "${found.accessibleName ?? ''}" (${state})${found.href ? ` href=${found.href}` : ''} on ${page.finalUrl}`,
      score: found.locator.kind === 'test-id' || found.locator.kind === 'role' ? 1 : 0.7,
    },
  ];
  const click = page.click;
  if (click?.clicked) {
    const effects = [
      click.navigatedTo ? `navigated to ${click.navigatedTo}` : null,
      ...click.dialogs.map((d) => `opened dialog "${d.name ?? '(unnamed)'}"`),
      ...click.nativeDialogs.map((d) => `raised ${d.type} "${d.message.slice(0, 100)}"`),
      ...click.requests.map((r) => `sent ${r.method} ${r.path}${r.status !== null ? ` → ${r.status}` : ''}`),
    ].filter((x): x is string => x !== null);
    items.push({
      source: 'page',
      selector: describeLocator(found.locator),
      role: 'effect',
      snippet: `a click ${effects.length > 0 ? effects.join('; ') : 'changed nothing observable'}`,
      score: 1,
    });
  }
  return items;
}

/**
 * The evidence as the model reads it, piece by piece: each is fenced apart as untrusted data in the
 * prompt. `notFoundOn`: the page's address when the component was looked for there and not found.
 */
export function evidencePieces(items: readonly EvidenceItem[], notFoundOn: string | null): EvidencePiece[] {
  const pieces = items.map(
    (item): EvidencePiece =>
      item.source === 'code'
        ? { kind: `code ${item.role}`, text: `${item.file}:${item.startLine}-${item.endLine}\n${item.snippet}` }
        : { kind: `page ${item.role}`, text: `${item.selector}: ${item.snippet}` },
  );
  if (notFoundOn !== null) pieces.push({ kind: 'page', text: `the component was not found on ${notFoundOn}` });
  return pieces;
}
