import type { Page } from 'playwright-core';

/**
 * Boxes of the visible headings, links, controls, images and landmarks of a page, for layout checks.
 * The list is read by a script in the page, so it is the page's word: the shape is checked and every
 * field bounded here before anyone else sees it.
 */

export interface ElementBox {
  readonly tag: string;
  readonly role: string | null;
  /** aria-label, alt, visible text or value, whichever comes first; at most 200 characters. */
  readonly name: string;
  /** Document coordinates in CSS pixels. */
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export const MAX_ELEMENTS = 500;

const SELECTOR = 'h1,h2,h3,h4,h5,h6,a[href],button,input,select,textarea,img,[role],main,nav,header,footer,aside,form,label';

// Runs in the page; a string because this project type-checks without the DOM library.
const COLLECT = `(() => {
  const found = [];
  for (const el of Array.from(document.querySelectorAll(${JSON.stringify(SELECTOR)}))) {
    if (found.length >= ${MAX_ELEMENTS}) break;
    const box = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if (box.width === 0 || box.height === 0 || style.visibility === 'hidden' || style.display === 'none') continue;
    const name = el.getAttribute('aria-label') ?? el.getAttribute('alt') ?? (el.innerText || el.value || '');
    found.push({ tag: el.tagName, role: el.getAttribute('role'), name: String(name).slice(0, 1000),
      x: box.x + scrollX, y: box.y + scrollY, width: box.width, height: box.height });
  }
  return found;
})()`;

export async function collectElements(page: Page): Promise<readonly ElementBox[]> {
  // A page that breaks the DOM API for its own scripts breaks only its own element list.
  const raw: unknown = await page.evaluate(COLLECT).catch(() => []);
  return sanitizeElements(raw);
}

const finite = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? Math.round(v * 100) / 100 : 0);
const text = (v: unknown, max: number): string => (typeof v === 'string' ? v.replace(/\s+/g, ' ').trim().slice(0, max) : '');

/** Pure: keeps at most MAX_ELEMENTS well-formed entries, every string and number bounded. */
export function sanitizeElements(raw: unknown): readonly ElementBox[] {
  if (!Array.isArray(raw)) return [];
  const out: ElementBox[] = [];
  for (const item of raw.slice(0, MAX_ELEMENTS)) {
    if (typeof item !== 'object' || item === null) continue;
    const e = item as Record<string, unknown>;
    const tag = text(e.tag, 40).toLowerCase();
    if (tag === '') continue;
    const role = typeof e.role === 'string' ? text(e.role, 40) : null;
    out.push({ tag, role, name: text(e.name, 200), x: finite(e.x), y: finite(e.y), width: finite(e.width), height: finite(e.height) });
  }
  return out;
}
