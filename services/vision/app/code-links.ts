import type { Caller } from '../../premium/caller.ts';
import { SEVERITIES, type CodeLink, type ElementClue, type Finding } from '../analysis/types.ts';

/**
 * Findings traced to the code that renders their element. Vision knows pages, not code: the search
 * is a port (`CodeLinker`) that the faces fill with the caller's own collection of code
 * (services/integration/code/element-code.ts); without one, analyses answer as before, saying why
 * no finding has code.
 */

/** One collection of the caller's, opened for one analysis. */
export interface CodeSearch {
  collectionName: string;
  /** The files most likely to render the element, best first, at most `limit`. */
  find(clue: ElementClue, limit: number): Promise<CodeLink[]>;
}

export interface CodeLinker {
  /**
   * The caller's collection to search: the named one (an error when it is not theirs or not indexed,
   * as for every operation that names one), else their only one; or why there is none.
   */
  open(caller: Caller, collectionName: string | undefined): Promise<CodeSearch | { why: string }>;
}

/** What the answer says of its code links. */
export interface CodeLinksSummary {
  /** The collection searched; null when none was. */
  collectionName: string | null;
  /** Findings given at least one file. */
  findingsLinked: number;
  /** Why no finding, or not every finding that names an element, has code. */
  reason?: string;
}

/** Files named per finding. */
export const CODE_LINKS_PER_FINDING = 3;
/** Findings traced per analysis, most severe first: the rest are listed in the reason. */
export const MAX_LINKED_FINDINGS = 40;
/** The searches of one analysis stop here; findings not reached by then are left without code. */
export const CODE_LINK_BUDGET_MS = 15_000;

const SELECTOR_TOKENS = /#((?:\\.|[\w-])+)|\.((?:\\.|[\w-])+)|\[data-(?:testid|test|cy)="((?:\\.|[^"\\])*)"\]/g;
const unescapeCss = (s: string) => s.replace(/\\(.)/g, '$1');

/**
 * What a selector alone says of its element (its last compound's id, test id, classes and tag): the
 * clue of an element the page did not describe (a report stored before clues were recorded).
 */
export function clueFromSelector(selector: string): ElementClue {
  const last = selector.split(/\s*[>+~\s]\s*/).at(-1) ?? selector;
  const clue: ElementClue = {
    selector,
    tag: /^[a-z][a-z0-9-]*/i.exec(last)?.[0] ?? '',
    text: '',
    testId: '',
    id: '',
    role: '',
    ariaLabel: '',
    classes: [],
    alt: '',
    src: '',
    name: '',
  };
  for (const m of last.matchAll(SELECTOR_TOKENS)) {
    if (m[1]) clue.id = unescapeCss(m[1]);
    else if (m[2]) clue.classes.push(unescapeCss(m[2]));
    else if (m[3]) clue.testId = unescapeCss(m[3]);
  }
  return clue;
}

/**
 * Each finding that names an element, with `code`: the files `search` finds for the element's
 * clues. One search per distinct element; findings beyond MAX_LINKED_FINDINGS or the time budget
 * are left without code and counted in the reason.
 */
export async function linkFindings(
  findings: readonly Finding[],
  clues: readonly ElementClue[],
  search: CodeSearch,
  now: () => number = Date.now,
): Promise<{ findings: Finding[]; summary: CodeLinksSummary }> {
  const bySelector = new Map(clues.map((c) => [c.selector, c]));
  const rank = (f: Finding) => -SEVERITIES.indexOf(f.severity);
  const pointing = findings
    .map((f, i) => ({ f, i }))
    .filter(({ f }) => f.selector !== undefined && f.selector !== '')
    .sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i);
  const chosen = pointing.slice(0, MAX_LINKED_FINDINGS);
  const deadline = now() + CODE_LINK_BUDGET_MS;
  const found = new Map<string, CodeLink[]>();
  let outOfTime = 0;
  for (const { f } of chosen) {
    const selector = f.selector!;
    if (found.has(selector)) continue;
    if (now() > deadline) {
      outOfTime++;
      continue;
    }
    found.set(selector, await search.find(bySelector.get(selector) ?? clueFromSelector(selector), CODE_LINKS_PER_FINDING));
  }
  const out = findings.map((f) => {
    const code = f.selector ? found.get(f.selector) : undefined;
    return code && code.length > 0 ? { ...f, code } : f;
  });
  const findingsLinked = out.filter((f) => f.code).length;
  const unmatched = chosen.filter(({ f }) => found.get(f.selector!)?.length === 0).length;
  const reasons = [
    ...(pointing.length > chosen.length
      ? [`${pointing.length - chosen.length} less severe finding(s) past the first ${MAX_LINKED_FINDINGS} were not traced`]
      : []),
    ...(outOfTime > 0 ? [`${outOfTime} element(s) were not traced within ${CODE_LINK_BUDGET_MS / 1000} s`] : []),
    ...(unmatched > 0 ? [`no file of the collection matched the element of ${unmatched} finding(s)`] : []),
  ];
  return {
    findings: out,
    summary: { collectionName: search.collectionName, findingsLinked, ...(reasons.length > 0 ? { reason: reasons.join('; ') } : {}) },
  };
}
