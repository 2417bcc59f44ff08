/**
 * Browser-only globals: a statement that reads one fails under Node with a ReferenceError (or
 * reads undefined), so cases that reach it belong in a browser (e2e) test, not a unit test.
 */

const DOM_NAMES = new Set([
  'document',
  'window',
  'navigator',
  'location',
  'history',
  'localStorage',
  'sessionStorage',
  'indexedDB',
  'customElements',
  'getComputedStyle',
  'requestAnimationFrame',
  'cancelAnimationFrame',
  'matchMedia',
  'alert',
  'confirm',
  'prompt',
  'DOMParser',
  'MutationObserver',
  'IntersectionObserver',
  'ResizeObserver',
  'Element',
  'Node',
  'NodeList',
  'ShadowRoot',
  'DocumentFragment',
]);

export function isDomGlobal(name: string): boolean {
  return DOM_NAMES.has(name) || /^(HTML|SVG)\w*$/.test(name);
}
