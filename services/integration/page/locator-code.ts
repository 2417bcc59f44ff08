import type { LocatorSpec } from './page-facts.ts';

/** A locator in words, for evidence and issues. */
export function describeLocator(spec: LocatorSpec): string {
  switch (spec.kind) {
    case 'test-id':
      return `[${spec.attribute}="${spec.value}"]`;
    case 'role':
      return `role=${spec.role}[name="${spec.name}"]`;
    case 'text':
      return `text="${spec.text}"`;
    case 'css':
      return spec.selector;
  }
}

/** A locator as Playwright test code on `page` (strings as JSON literals, so any text is safe in the source). */
export function locatorCode(spec: LocatorSpec, page = 'page'): string {
  const q = (s: string) => JSON.stringify(s);
  switch (spec.kind) {
    case 'test-id':
      return spec.attribute === 'data-testid'
        ? `${page}.getByTestId(${q(spec.value)})`
        : `${page}.locator(${q(`[${spec.attribute}="${spec.value.replace(/["\\]/g, '\\$&')}"]`)})`;
    case 'role':
      return `${page}.getByRole(${q(spec.role)}, { name: ${q(spec.name)}, exact: true })`;
    case 'text':
      return `${page}.getByText(${q(spec.text)}, { exact: true })`;
    case 'css':
      return `${page}.locator(${q(spec.selector)})`;
  }
}
