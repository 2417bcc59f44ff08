/**
 * Sentences of an expected behaviour, read as claims the evidence can decide. Pure: the reading is
 * deliberately narrow (what the page and the code can show without judgment), and a sentence it does
 * not recognise is an `open` claim, which stays unknown unless a language model judges it.
 */

export type Claim =
  | { kind: 'visible'; negated: boolean }
  | { kind: 'enabled'; negated: boolean }
  | { kind: 'name'; negated: boolean; text: string }
  | { kind: 'role'; negated: boolean; role: string }
  | { kind: 'opens-dialog'; negated: boolean; name: string | null }
  | { kind: 'navigates'; negated: boolean; target: string | null }
  | { kind: 'requests'; negated: boolean; method: string | null; path: string | null }
  | { kind: 'accessible'; negated: boolean }
  | { kind: 'throws'; negated: boolean; errorType: string | null; condition: string | null }
  | { kind: 'parameter'; negated: boolean; name: string }
  | { kind: 'open' };

/** Splits at sentence ends (., !, ? or ; followed by space, or a line break), keeping quoted text whole. */
export function sentencesOf(text: string): string[] {
  const sentences: string[] = [];
  let current = '';
  let quote: string | null = null;
  const closing: Record<string, string> = { '"': '"', '“': '”', "'": "'", '`': '`' };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    current += ch;
    if (quote !== null) {
      if (ch === quote) quote = null;
      continue;
    }
    // An apostrophe inside a word (it's, user's) opens nothing.
    if (ch in closing && !(ch === "'" && /\p{L}/u.test(text[i - 1] ?? ''))) {
      quote = closing[ch] ?? null;
      continue;
    }
    const next = text[i + 1];
    const end = (/[.!?;]/.test(ch) && (next === undefined || /\s/.test(next))) || ch === '\n';
    // "/checkout.html" or "e.g." in the middle of a sentence are not ends: only a space after counts.
    if (end) {
      if (current.trim()) sentences.push(current.trim());
      current = '';
    }
  }
  if (current.trim()) sentences.push(current.trim());
  return sentences.map((s) => s.replace(/[.!?;]+$/, '').trim()).filter((s) => s.length > 0);
}

const QUOTED = /["“'`]([^"”'`]{1,200})["”'`]/;
const NEGATION = /\b(?:not|never|no longer|doesn't|does not|don't|do not|isn't|is not|cannot|can't|without)\b/i;
const PATH = /(?:^|\s|["'`])((?:https?:\/\/[^\s"'`]+)|(?:\/[\w\-./~%?=&]*))/;
const ROLE_NAMES = [
  'button',
  'link',
  'checkbox',
  'textbox',
  'heading',
  'dialog',
  'tab',
  'switch',
  'combobox',
  'menu',
  'slider',
  'img',
  'navigation',
];

const quoted = (s: string): string | null => QUOTED.exec(s)?.[1]?.trim() ?? null;

/** The claim one sentence makes, or `open`. */
export function claimOf(sentence: string): Claim {
  const s = sentence.trim();
  // The kind of claim is read from the words outside quotes: 'It reads "Go to checkout"' is about a
  // label, not a navigation, and 'It is labelled "Do not disturb"' is not negated.
  const lower = s.replace(new RegExp(QUOTED.source, 'g'), '""').toLowerCase();
  const negated = NEGATION.test(lower);

  if (/\b(throws?|raises?|rejects? with)\b/.test(lower)) {
    const type = /\b([A-Z][A-Za-z]*(?:Error|Exception))\b/.exec(s)?.[1] ?? null;
    const condition = /\b(?:when|if|for|unless)\b\s+(.+)$/i.exec(s)?.[1] ?? null;
    return { kind: 'throws', negated, errorType: type, condition };
  }
  if (/\b(dialog|modal|pop-?up|lightbox)\b/.test(lower) && /\b(opens?|shows?|displays?|brings up|pops up|appears?)\b/.test(lower)) {
    const name = quoted(s) ?? /\b(?:the|an?)\s+(.+?)\s+(?:dialog|modal|pop-?up|lightbox)\b/i.exec(s)?.[1]?.trim() ?? null;
    return { kind: 'opens-dialog', negated, name: name && !/^(?:a|an|the)$/i.test(name) ? name : null };
  }
  if (/\b(navigates?|goes|go|redirects?|takes (?:the user|you|them) to|leads to|links to|points to|opens the page)\b/.test(lower)) {
    const target = PATH.exec(s)?.[1] ?? quoted(s);
    return { kind: 'navigates', negated, target: target ?? null };
  }
  if (
    /\b(requests?|posts?|calls?|sends?|fetch(?:es)?|submits?)\b/.test(lower) &&
    (PATH.test(s) || /\b(api|endpoint|server|backend)\b/.test(lower))
  ) {
    const method =
      /\b(GET|POST|PUT|PATCH|DELETE)\b/i.exec(s)?.[1]?.toUpperCase() ?? (/\bposts?\b|\bsubmits?\b/.test(lower) ? 'POST' : null);
    const path = PATH.exec(s)?.[1] ?? null;
    return { kind: 'requests', negated, method, path };
  }
  if (/\b(accessible|accessibility|a11y|wcag|screen readers?)\b/.test(lower)) {
    return { kind: 'accessible', negated: /\b(not|never)\b/.test(lower) && !/\bno (?:accessibility )?violations\b/.test(lower) };
  }
  if (/\b(disabled|enabled|clickable|greyed out|grayed out|inactive)\b/.test(lower)) {
    const saysDisabled = /\b(disabled|greyed out|grayed out|inactive)\b/.test(lower);
    // "is disabled" is the claim enabled, negated; "is not disabled" is enabled.
    return { kind: 'enabled', negated: saysDisabled !== negated };
  }
  if (/\b(label(?:l?ed)?|reads|says|named|accessible name|text|caption|titled)\b/.test(lower) && quoted(s) !== null) {
    return { kind: 'name', negated, text: quoted(s) as string };
  }
  if (/\b(visible|shown|displayed|appears|rendered|on the page|hidden|invisible)\b/.test(lower)) {
    const saysHidden = /\b(hidden|invisible)\b/.test(lower);
    return { kind: 'visible', negated: saysHidden !== negated };
  }
  const role = new RegExp(`\\bis (?:a|an)\\s+(${ROLE_NAMES.join('|')})\\b`).exec(lower)?.[1];
  if (role) return { kind: 'role', negated, role };
  const parameter =
    /\b(?:accepts?|takes?|has|receives?)\s+(?:an?\s+|the\s+)?[`"']?([A-Za-z_$][\w$]*)[`"']?\s+(?:prop|property|parameter|argument|option)\b/.exec(
      s,
    )?.[1];
  if (parameter) return { kind: 'parameter', negated, name: parameter };
  return { kind: 'open' };
}

/** Whether a claim is about the live page (and so needs a url to be decided). */
export const isPageClaim = (claim: Claim): boolean =>
  claim.kind === 'visible' ||
  claim.kind === 'enabled' ||
  claim.kind === 'name' ||
  claim.kind === 'role' ||
  claim.kind === 'opens-dialog' ||
  claim.kind === 'navigates' ||
  claim.kind === 'requests' ||
  claim.kind === 'accessible';

/** Whether only the component's code can decide the claim (what it throws, what it takes). */
export const isCodeClaim = (claim: Claim): boolean => claim.kind === 'throws' || claim.kind === 'parameter';

/** Whether deciding the claim needs a click on the component. */
export const needsClick = (claim: Claim): boolean =>
  claim.kind === 'opens-dialog' || claim.kind === 'navigates' || claim.kind === 'requests';
