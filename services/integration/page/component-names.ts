import { splitIdentifier } from '../../rag/chunking/identifiers.ts';

/**
 * What a component's code name says about how it shows on a page: `AddToCartButton` is most likely
 * a button named "Add to cart", with a test id like `add-to-cart` or `add-to-cart-button`. Pure, so
 * the strategies the probe tries (and the Playwright locators generated from them) are unit-tested.
 */

/** Last word of a component name -> the ARIA role such a component has. */
const ROLE_WORDS: Readonly<Record<string, string>> = {
  button: 'button',
  btn: 'button',
  link: 'link',
  anchor: 'link',
  dialog: 'dialog',
  modal: 'dialog',
  checkbox: 'checkbox',
  toggle: 'switch',
  switch: 'switch',
  tab: 'tab',
  input: 'textbox',
  field: 'textbox',
  textbox: 'textbox',
  select: 'combobox',
  dropdown: 'combobox',
  combobox: 'combobox',
  menu: 'menu',
  slider: 'slider',
  heading: 'heading',
  title: 'heading',
  image: 'img',
  img: 'img',
  navigation: 'navigation',
  nav: 'navigation',
  alert: 'alert',
  banner: 'banner',
};

export interface ComponentNames {
  /** Lower-case words of the name: add, to, cart, button. */
  words: string[];
  /** The role the last word implies, if any. */
  role: string | null;
  /** The words that would make its accessible name (the role word dropped): add, to, cart. */
  nameWords: string[];
  /** Normalized (lower-case letters and digits only) forms a test id may take. */
  testIdKeys: string[];
  /** kebab-case forms, for ids and classes. */
  kebab: string[];
}

export const normalizeKey = (s: string): string => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

export function componentNames(component: string): ComponentNames {
  const words = splitIdentifier(component.trim().replace(/[^\p{L}\p{N}_$-]+/gu, ' '))
    .flatMap((w) => w.split(/[\s_-]+/))
    .map((w) => w.toLowerCase())
    .filter(Boolean);
  const last = words.at(-1);
  const role = last !== undefined && words.length > 0 ? (ROLE_WORDS[last] ?? null) : null;
  const nameWords = role !== null && words.length > 1 ? words.slice(0, -1) : words;
  const unique = (xs: string[]) => [...new Set(xs.filter(Boolean))];
  return {
    words,
    role,
    nameWords,
    testIdKeys: unique([normalizeKey(words.join('')), normalizeKey(nameWords.join(''))]),
    kebab: unique([words.join('-'), nameWords.join('-')]),
  };
}

/** A pattern for an accessible name made of these words, in order, any case, any spacing between. */
export function namePattern(words: readonly string[], whole: boolean): RegExp {
  const body = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[\\s_-]*');
  return new RegExp(whole ? `^\\s*${body}\\s*$` : body, 'i');
}
