import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { generateUnitTests } from '../../../services/integration/generate/unit/generate-unit-tests.ts';
import type { UnitTestRequest } from '../../../services/integration/generate/unit/generate-unit-tests.ts';
import { importSpecifier, testFileFor } from '../../../services/integration/generate/unit/test-paths.ts';

const FIXTURE = new URL('../../fixtures/ui-kit/', import.meta.url);
const QUANTITY = readFileSync(new URL('src/cart/quantity.js', FIXTURE), 'utf8');
const PRICE = readFileSync(new URL('src/format/price.ts', FIXTURE), 'utf8');

const request = (overrides: Partial<UnitTestRequest> = {}): UnitTestRequest => ({
  component: 'clampQuantity',
  source: QUANTITY,
  modulePath: 'src/cart/quantity.js',
  testType: 'unit',
  coverage: 'comprehensive',
  framework: 'mocha',
  moduleSystem: 'esm',
  usages: [],
  ...overrides,
});

async function content(overrides: Partial<UnitTestRequest> = {}): Promise<string> {
  const result = await generateUnitTests(request(overrides));
  return result.files[0]?.content ?? '';
}

describe('generate unit: framework dialects and imports (unit)', () => {
  it('mocha: chai expect, deep equality, throw with class and message', async () => {
    const result = await generateUnitTests(request());
    const text = result.files[0]?.content ?? '';
    expect(result.files[0]?.path).to.equal('test/generated/clampQuantity.unit.spec.js');
    expect(result.runCommand).to.equal('npx mocha test/generated/clampQuantity.unit.spec.js');
    expect(text).to.include("import { expect } from 'chai';\nimport { clampQuantity } from '../../src/cart/quantity.js';");
    expect(text).to.include('expect(clampQuantity(3)).to.deep.equal(3);');
    expect(text).to.include("expect(() => clampQuantity(-1)).to.throw(RangeError, 'quantity must not be negative');");
    expect(text).to.include("describe('clampQuantity (unit)', () => {");
    expect(text).to.not.match(/TODO/i);
  });

  it('vitest: imports describe/it/expect from vitest and uses toEqual / toThrow', async () => {
    const result = await generateUnitTests(request({ framework: 'vitest' }));
    const text = result.files[0]?.content ?? '';
    expect(result.runCommand).to.equal('npx vitest run test/generated/clampQuantity.unit.spec.js');
    expect(text).to.include("import { describe, it, expect } from 'vitest';");
    expect(text).to.include('expect(clampQuantity(3)).toEqual(3);');
    expect(text).to.include('expect(() => clampQuantity(-1)).toThrow(RangeError);');
    expect(text).to.include("expect(() => clampQuantity(-1)).toThrow('quantity must not be negative');");
  });

  it('jest: relies on its globals and runs ES modules with the VM modules flag', async () => {
    const result = await generateUnitTests(request({ framework: 'jest' }));
    const text = result.files[0]?.content ?? '';
    expect(result.runCommand).to.equal('NODE_OPTIONS=--experimental-vm-modules npx jest test/generated/clampQuantity.unit.spec.js');
    expect(text).to.not.include("from 'vitest'");
    expect(text.split('\n').filter((l) => l.startsWith('import '))).to.deep.equal([
      "import { clampQuantity } from '../../src/cart/quantity.js';",
    ]);
    expect(text).to.include('expect(clampQuantity(3)).toEqual(3);');
  });

  it('node:test: describe/it from node:test and node:assert/strict', async () => {
    const result = await generateUnitTests(request({ framework: 'node:test' }));
    const text = result.files[0]?.content ?? '';
    expect(result.runCommand).to.equal('node --test test/generated/clampQuantity.unit.spec.js');
    expect(text).to.include("import { describe, it } from 'node:test';\nimport assert from 'node:assert/strict';");
    expect(text).to.include('assert.deepStrictEqual(clampQuantity(3), 3);');
    expect(text).to.include("assert.throws(() => clampQuantity(-1), { name: 'RangeError', message: 'quantity must not be negative' });");
  });

  it('CommonJS: require for the framework and the module', async () => {
    expect(await content({ moduleSystem: 'cjs' })).to.include(
      "const { expect } = require('chai');\nconst { clampQuantity } = require('../../src/cart/quantity.js');",
    );
    const nodeTest = await content({ moduleSystem: 'cjs', framework: 'node:test' });
    expect(nodeTest).to.include("const { describe, it } = require('node:test');\nconst assert = require('node:assert/strict');");
  });

  it('a default export and a whole-module export are imported as what they are', async () => {
    const source = 'export default function double(n) { if (n < 0) throw new RangeError("negative"); return n * 2; }';
    const esm = await content({ component: 'double', source, modulePath: 'lib/double.mjs' });
    expect(esm).to.include("import double from '../../lib/double.mjs';");
    const cjs = await content({ component: 'double', source, modulePath: 'lib/double.js', moduleSystem: 'cjs' });
    expect(cjs).to.include("const { default: double } = require('../../lib/double.js');");
    const whole = await content({
      component: 'double',
      source: 'module.exports = function double(n) { return n * 2; };',
      modulePath: 'lib/double.js',
      moduleSystem: 'cjs',
    });
    expect(whole).to.include("const double = require('../../lib/double.js');");
  });

  it('TypeScript modules get a .ts test that keeps the .ts extension in the import', async () => {
    const result = await generateUnitTests(request({ component: 'formatPrice', source: PRICE, modulePath: 'src/format/price.ts' }));
    expect(result.files[0]?.path).to.equal('test/generated/formatPrice.unit.spec.ts');
    expect(result.files[0]?.content).to.include("import { formatPrice } from '../../src/format/price.ts';");
  });

  it('a value a declared TypeScript type does not allow is passed with a cast, so the test typechecks', async () => {
    const source =
      "export function shout(text: string): string { if (typeof text !== 'string') throw new TypeError('text must be a string'); return text; }";
    const text = await content({ component: 'shout', source, modulePath: 'src/shout.ts' });
    expect(text).to.match(/shout\((1|\{\}|true|null|\[\]) as never\)\)\.to\.throw\(TypeError, 'text must be a string'\)/);
  });

  it('places the test by test type and module extension, and imports by a relative specifier', () => {
    expect(testFileFor('x', 'integration', 'src/a/b.mjs', 'mocha', 'esm').path).to.equal('test/generated/x.integration.spec.mjs');
    expect(testFileFor('x', 'unit', 'src/a/b.cjs', 'mocha', 'cjs').path).to.equal('test/generated/x.unit.spec.cjs');
    expect(testFileFor('x', 'unit', 'src/a.tsx', 'vitest', 'esm').path).to.equal('test/generated/x.unit.spec.ts');
    expect(importSpecifier('test/generated/x.unit.spec.js', 'src/cart/quantity.js')).to.equal('../../src/cart/quantity.js');
    expect(importSpecifier('test/generated/x.unit.spec.js', 'index.js')).to.equal('../../index.js');
    expect(importSpecifier('test/generated/x.unit.spec.js', 'test/generated/helpers/h.js')).to.equal('./helpers/h.js');
  });

  it('async functions: awaited results and rejections', async () => {
    const source = "export async function load(id) { if (typeof id !== 'string') throw new TypeError('id must be a string'); return id; }";
    const mocha = await content({ component: 'load', source, modulePath: 'src/load.js' });
    expect(mocha).to.include('const error = await load(1).then(() => undefined, (caught) => caught);');
    expect(mocha).to.include("expect(error).to.have.property('message', 'id must be a string');");
    const nodeTest = await content({ component: 'load', source, modulePath: 'src/load.js', framework: 'node:test' });
    expect(nodeTest).to.include("await assert.rejects(load(1), { name: 'TypeError', message: 'id must be a string' });");
    const vitest = await content({ component: 'load', source, modulePath: 'src/load.js', framework: 'vitest' });
    expect(vitest).to.include('await expect(load(1)).rejects.toThrow(TypeError);');
  });

  it('a component named like the test framework is imported under another name', async () => {
    const source = "export function assert(ok) { if (!ok) throw new Error('not ok'); return true; }";
    const text = await content({ component: 'assert', source, modulePath: 'src/assert.js', framework: 'node:test' });
    expect(text).to.include("import { assert as assertUnderTest } from '../../src/assert.js';");
    expect(text).to.include('assert.throws(() => assertUnderTest(');
  });

  it('an exported error class is imported to assert the exact class', async () => {
    const source =
      "export class QuotaError extends Error {}\nexport function take(n) { if (n > 5) throw new QuotaError('too many'); return n; }";
    const text = await content({ component: 'take', source, modulePath: 'src/take.js' });
    expect(text).to.include("import { take, QuotaError } from '../../src/take.js';");
    expect(text).to.include("expect(() => take(6)).to.throw(QuotaError, 'too many');");
  });
});
