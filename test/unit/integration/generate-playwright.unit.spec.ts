import { expect } from 'chai';
import { playwrightTests } from '../../../services/integration/generate/e2e/playwright-spec.ts';
import { detectFramework, moduleSystemOf } from '../../../services/integration/generate/project-setup.ts';
import { componentNames } from '../../../services/integration/page/component-names.ts';
import { locatorCode } from '../../../services/integration/page/locator-code.ts';
import { samplePageFacts } from '../../support/page-facts-sample.ts';

const facts = samplePageFacts;

describe('integration generate: Playwright tests from page facts, names and project set-up (unit)', () => {
  it('reads a component name as words, a role and test-id keys', () => {
    expect(componentNames('AddToCartButton')).to.deep.equal({
      words: ['add', 'to', 'cart', 'button'],
      role: 'button',
      nameWords: ['add', 'to', 'cart'],
      testIdKeys: ['addtocartbutton', 'addtocart'],
      kebab: ['add-to-cart-button', 'add-to-cart'],
    });
    expect(componentNames('checkout-link')).to.include({ role: 'link' });
    expect(componentNames('Price'))
      .to.include({ role: null })
      .and.deep.include({ nameWords: ['price'] });
  });

  it('writes locators as code with every string a JSON literal', () => {
    expect(locatorCode({ kind: 'test-id', attribute: 'data-testid', value: 'a"b' })).to.equal('page.getByTestId("a\\"b")');
    expect(locatorCode({ kind: 'test-id', attribute: 'data-cy', value: 'x' })).to.equal('page.locator("[data-cy=\\"x\\"]")');
    expect(locatorCode({ kind: 'role', role: 'button', name: 'Add to cart' })).to.equal(
      'page.getByRole("button", { name: "Add to cart", exact: true })',
    );
    expect(locatorCode({ kind: 'text', text: '`${x}`' })).to.equal('page.getByText("`${x}`", { exact: true })');
  });

  it('basic: visible and named; comprehensive adds state and what a click did; exhaustive adds count, text and the keyboard', () => {
    const basic = playwrightTests({ component: 'AddToCartButton', testType: 'e2e', coverage: 'basic', facts: facts() });
    expect(basic.cases.map((c) => c.name)).to.deep.equal(['is visible', 'is named Add to cart']);
    expect(basic.files).to.have.length(1);
    expect(basic.files[0]!.path).to.equal('tests/e2e/add-to-cart-button.e2e.spec.ts');
    expect(basic.runCommand).to.equal('npx playwright test tests/e2e/add-to-cart-button.e2e.spec.ts');
    const comprehensive = playwrightTests({ component: 'AddToCartButton', testType: 'e2e', coverage: 'comprehensive', facts: facts() });
    expect(comprehensive.cases.map((c) => c.name)).to.deep.equal([
      'is visible',
      'is named Add to cart',
      'is enabled',
      'has role button',
      'sends POST /api/cart and opens the Added to cart dialog',
    ]);
    const source = comprehensive.files[0]!.content;
    expect(source).to.include("import { test, expect } from '@playwright/test';");
    expect(source).to.include('const PAGE_URL = process.env.PAGE_URL ?? "http://127.0.0.1:3000/";');
    expect(source).to.include('r.method() === "POST" && new URL(r.url()).pathname === "/api/cart"');
    expect(source).to.include('expect(response?.status()).toBe(200);');
    expect(source).to.not.match(/TODO|FIXME/);
    const exhaustive = playwrightTests({ component: 'AddToCartButton', testType: 'e2e', coverage: 'exhaustive', facts: facts() });
    expect(exhaustive.cases.map((c) => c.name).slice(5)).to.deep.equal([
      'matches 1 element',
      'shows its text',
      'sends POST /api/cart and opens the Added to cart dialog from the keyboard',
    ]);
  });

  it('asserts a navigation by its path, and says why there is no click case when a click did nothing', () => {
    const link = facts({
      click: { clicked: true, navigatedTo: 'http://127.0.0.1:3000/checkout.html', dialogs: [], nativeDialogs: [], requests: [] },
    });
    const tests = playwrightTests({ component: 'CheckoutLink', testType: 'e2e', coverage: 'comprehensive', facts: link });
    expect(tests.cases.at(-1)!.name).to.equal('navigates to /checkout.html');
    expect(tests.files[0]!.content).to.include('await expect(page).toHaveURL(new RegExp("\\\\/checkout\\\\.html$"));');
    const inert = playwrightTests({
      component: 'CheckoutLink',
      testType: 'e2e',
      coverage: 'comprehensive',
      facts: facts({ click: { clicked: true, navigatedTo: null, dialogs: [], nativeDialogs: [], requests: [] } }),
    });
    expect(inert.skipped.map((s) => s.reason)).to.deep.equal([
      'a click changed nothing the page showed (no navigation, dialog or request)',
    ]);
  });

  it('visual: a screenshot assertion and its baseline at the default snapshot path, as base64', () => {
    const visual = playwrightTests({ component: 'AddToCartButton', testType: 'visual', coverage: 'basic', facts: facts() });
    expect(visual.files.map((f) => f.path)).to.deep.equal([
      'tests/e2e/add-to-cart-button.visual.spec.ts',
      'tests/e2e/add-to-cart-button.visual.spec.ts-snapshots/add-to-cart-button-linux.png',
    ]);
    expect(visual.files[1]).to.include({ encoding: 'base64', content: Buffer.from('89504e470d0a1a0a', 'hex').toString('base64') });
    expect(visual.files[0]!.content).to.include('toHaveScreenshot("add-to-cart-button.png", { maxDiffPixelRatio: 0.01 })');
  });

  it("detects the project's framework and module system", () => {
    expect(detectFramework(JSON.stringify({ devDependencies: { vitest: '^3' } }))).to.equal('vitest');
    expect(detectFramework(JSON.stringify({ devDependencies: { jest: '^30', mocha: '^11' } }))).to.equal('jest');
    expect(detectFramework(JSON.stringify({ devDependencies: { mocha: '^11' } }))).to.equal('mocha');
    expect(detectFramework('not json')).to.equal('mocha');
    expect(detectFramework(null)).to.equal('mocha');
    expect(moduleSystemOf(null, 'src/a.js', 'export function a() {}')).to.equal('esm');
    expect(moduleSystemOf(null, 'src/a.js', 'module.exports = { a };')).to.equal('cjs');
    expect(moduleSystemOf('{"type":"module"}', 'src/a.js', 'function a() {}')).to.equal('esm');
    expect(moduleSystemOf('{"type":"module"}', 'src/a.cjs', 'function a() {}')).to.equal('cjs');
  });
});
