import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { GenerateError, generateUnitTests } from '../../../services/integration/generate/unit/generate-unit-tests.ts';
import type { UnitTestRequest } from '../../../services/integration/generate/unit/generate-unit-tests.ts';

const FIXTURE = new URL('../../fixtures/ui-kit/', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, FIXTURE), 'utf8');
const DOM = "needs a browser DOM: generate an e2e test with the page's url";

const request = (overrides: Partial<UnitTestRequest>): UnitTestRequest => ({
  component: 'clampQuantity',
  source: read('src/cart/quantity.js'),
  modulePath: 'src/cart/quantity.js',
  testType: 'unit',
  coverage: 'basic',
  framework: 'mocha',
  moduleSystem: 'esm',
  usages: [],
  ...overrides,
});

async function failure(overrides: Partial<UnitTestRequest>): Promise<GenerateError> {
  try {
    await generateUnitTests(request(overrides));
  } catch (error) {
    if (error instanceof GenerateError) return error;
    throw error;
  }
  throw new Error('expected a GenerateError');
}

describe('generate unit: what it refuses and what it leaves out (unit)', () => {
  it('a name the module declares but does not export: COMPONENT_NOT_FOUND, saying so', async () => {
    const error = await failure({
      component: 'helper',
      source: 'function helper(x) { return x; }\nexport const y = 1;',
      modulePath: 'src/h.js',
    });
    expect(error.code).to.equal('COMPONENT_NOT_FOUND');
    expect(error.message).to.equal('helper is declared in src/h.js (line 1) but not exported, so a test cannot import it');
  });

  it('a name the module does not have, or only re-exports', async () => {
    expect((await failure({ component: 'missing' })).code).to.equal('COMPONENT_NOT_FOUND');
    const reexport = await failure({ component: 'x', source: "export { x } from './x.js';", modulePath: 'src/index.js' });
    expect(reexport.code).to.equal('NOT_SUPPORTED');
    expect(reexport.message).to.include("re-exports x from './x.js'");
  });

  it('something exported that cannot be called, a generator, a file that is not a script: NOT_SUPPORTED', async () => {
    expect((await failure({ component: 'LIMIT', source: 'export const LIMIT = 5;', modulePath: 'src/l.js' })).code).to.equal(
      'NOT_SUPPORTED',
    );
    expect((await failure({ component: 'ids', source: 'export function* ids() { yield 1; }', modulePath: 'src/g.js' })).code).to.equal(
      'NOT_SUPPORTED',
    );
    expect((await failure({ component: 'x', source: 'x = 1', modulePath: 'src/x.py' })).code).to.equal('NOT_SUPPORTED');
    expect((await failure({ component: 'Comp', source: 'export const Comp = () => <div/>;', modulePath: 'src/c.jsx' })).code).to.equal(
      'NOT_SUPPORTED',
    );
  });

  it('syntax plain Node cannot load (JSX in .js, a TypeScript enum) is refused for mocha and node:test, not for vitest', async () => {
    const jsx = await failure({ component: 'Comp', source: 'export function Comp(n) { return <b>{n}</b>; }', modulePath: 'src/c.js' });
    expect(jsx.message).to.equal(
      'src/c.js has JSX (line 1), which Node cannot load without a transform, so mocha cannot import it: use vitest or jest',
    );
    const source =
      "enum Unit { Cent }\nexport function cents(n: number): number { if (n < 0) throw new RangeError('negative'); return n; }";
    expect((await failure({ component: 'cents', source, modulePath: 'src/c.ts', framework: 'node:test' })).message).to.include(
      'has an enum (line 1)',
    );
    const vitest = await generateUnitTests(request({ component: 'cents', source, modulePath: 'src/c.ts', framework: 'vitest' }));
    expect(vitest.cases.length).to.be.greaterThan(0);
  });

  it('a module that touches the DOM when imported cannot be unit tested under Node', async () => {
    const error = await failure({ component: 'mountShop', source: read('src/shop.js'), modulePath: 'src/shop.js' });
    expect(error.code).to.equal('NOT_SUPPORTED');
    expect(error.message).to.equal(`importing src/shop.js runs browser code at line 13: ${DOM}`);
  });

  it('a DOM component: the guard before the DOM use is a case, the happy path is skipped for an e2e test', async () => {
    const result = await generateUnitTests(
      request({
        component: 'AddToCartButton',
        source: read('src/components/add-to-cart-button.js'),
        modulePath: 'src/components/add-to-cart-button.js',
        coverage: 'comprehensive',
      }),
    );
    expect(result.cases.map((c) => [c.kind, c.line])).to.deep.equal([['error', 11]]);
    expect(result.files[0]?.content).to.include(".to.throw(Error, 'productId is required');");
    expect(result.skipped).to.deep.include({ reason: `the happy path: ${DOM}`, line: 14 });
  });

  it('no case at all (a DOM component at basic coverage): NO_CASES with the reasons', async () => {
    const error = await failure({
      component: 'CheckoutLink',
      source: read('src/components/checkout-link.js'),
      modulePath: 'src/components/checkout-link.js',
    });
    expect(error.code).to.equal('NO_CASES');
    expect(error.message).to.include(DOM);
    expect(error.skipped).to.deep.equal([{ reason: `the happy path: ${DOM}`, line: 7 }]);
  });

  it('an @example the code contradicts is reported, not emitted', async () => {
    const source = [
      '/**',
      ' * @example half(4) // => 2',
      ' * @example half(-2) // => -1',
      ' */',
      "export function half(n) { if (n < 0) throw new RangeError('negative'); return n / 2; }",
    ].join('\n');
    const result = await generateUnitTests(request({ component: 'half', source, modulePath: 'src/half.js' }));
    expect(result.cases.map((c) => c.name)).to.deep.equal(['half(4) returns 2 (@example)']);
    expect(result.skipped[0]?.reason).to.match(/^the @example at line 3 .*: the guard at line 5 throws for these arguments/);
  });

  it('a call that only has to run is not made up for a parameter it cannot build a real value of', async () => {
    const source =
      "export async function save(db: Db, name: string): Promise<void> {\n  if (name.length === 0) throw new Error('name is required');\n  await db.collection('names').insertOne({ name });\n}";
    const result = await generateUnitTests(request({ component: 'save', source, modulePath: 'src/save.ts', coverage: 'comprehensive' }));
    expect(result.cases.map((c) => c.name)).to.deep.equal(["save('text' as never, '') rejects with Error 'name is required'"]);
    expect(result.skipped[0]?.reason).to.equal(
      'the happy path: db is Db, which the generator cannot make a real value of, so a call that only has to run would rest on a guess',
    );
  });

  it('a call that only has to run is not generated when the way there calls code from another module', async () => {
    const source =
      "import { save } from 'db-lib';\nexport function store(name: string): boolean {\n  if (name === '') throw new Error('empty');\n  save(name);\n  return true;\n}";
    const result = await generateUnitTests(request({ component: 'store', source, modulePath: 'src/store.ts', coverage: 'comprehensive' }));
    expect(result.cases.map((c) => c.name)).to.deep.equal(["store('') throws Error 'empty'"]);
    expect(result.skipped).to.deep.include({
      reason:
        'the happy path: line 4 calls save (imported from db-lib), code the generator does not read, so a call that only has to run would rest on a guess',
      line: 4,
    });
  });

  it('a condition the evaluator cannot read is skipped with its reason and line; the guards before it still are cases', async () => {
    const source = [
      "import { limitOf } from './limits.js';",
      'export function take(n) {',
      "  if (typeof n !== 'number') throw new TypeError('n must be a number');",
      "  if (n > limitOf()) throw new RangeError('too many');",
      '  return n;',
      '}',
    ].join('\n');
    const result = await generateUnitTests(request({ component: 'take', source, modulePath: 'src/take.js', coverage: 'comprehensive' }));
    expect(result.cases.map((c) => [c.kind, c.line])).to.deep.equal([['error', 3]]);
    expect(result.skipped).to.deep.include({
      reason:
        'the guard at line 4 (`n > limitOf()`): cannot decide `n > limitOf()` at line 4: limitOf() is not a call the generator evaluates',
      line: 4,
    });
  });
});
