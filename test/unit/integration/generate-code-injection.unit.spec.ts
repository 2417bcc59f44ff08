import { expect } from 'chai';
import { playwrightTests } from '../../../services/integration/generate/e2e/playwright-spec.ts';
import { dialectFor } from '../../../services/integration/generate/unit/dialects.ts';
import { generateUnitTests } from '../../../services/integration/generate/unit/generate-unit-tests.ts';
import type { UnitTestRequest } from '../../../services/integration/generate/unit/generate-unit-tests.ts';
import { renderTestFile } from '../../../services/integration/generate/unit/render-test-file.ts';
import type { TestFileInput } from '../../../services/integration/generate/unit/render-test-file.ts';
import { samplePageFacts } from '../../support/page-facts-sample.ts';
import { BIDI_CONTROL, readGenerated, specifiersOf, stringsOf } from './generated-source.ts';

/**
 * Customer text (file paths, export names, component names, page text) lands in the test files we
 * generate; the customer runs those. Each case feeds text that would end a comment or a string
 * early, or reorder what an editor shows, and reads the file back with a real parser.
 */

const ADD = "export function add(a, b) {\n  if (typeof a !== 'number') throw new TypeError('a must be a number');\n  return a + b;\n}\n";

const unitRequest = (overrides: Partial<UnitTestRequest>): UnitTestRequest => ({
  component: 'add',
  source: ADD,
  modulePath: 'src/add.js',
  testType: 'unit',
  coverage: 'basic',
  framework: 'mocha',
  moduleSystem: 'esm',
  usages: [],
  ...overrides,
});

const renderInput = (overrides: Partial<TestFileInput>): TestFileInput => ({
  component: 'add',
  localName: 'add',
  exportKind: 'named',
  modulePath: 'src/add.ts',
  specifier: '../../src/add.ts',
  testType: 'unit',
  file: { path: 'test/generated/add.unit.spec.ts', typescript: true, esm: true },
  dialect: dialectFor('mocha'),
  runCommand: 'npx mocha test/generated/add.unit.spec.ts',
  awaited: false,
  cases: [
    {
      name: 'add(1, 2) returns 3',
      kind: 'happy',
      line: 3,
      call: 'add(1, 2)',
      expectation: { assertion: { kind: 'equals', expected: '3' }, text: 'returns 3', imports: [] },
    },
  ],
  skipped: [],
  ...overrides,
});

const EXIT = 'process.exit';

describe('generated tests: customer text cannot become code (unit)', () => {
  it('unit renderer: a path with U+2028 and code after it stays inside the header comment', () => {
    const modulePath = 'a\u2028process.exit(7)//.ts';
    const code = renderTestFile(
      renderInput({
        modulePath,
        specifier: `../../${modulePath}`,
        skipped: [{ reason: 'the call at b\u2029process.exit(8)//.ts:3 is not literal', line: 3 }],
      }),
    );
    const parsed = readGenerated(code);
    expect(parsed.callees).to.not.include(EXIT);
    expect(parsed.syntaxErrors).to.deep.equal([]);
    expect(parsed.statements).to.deep.equal(['ImportDeclaration', 'ImportDeclaration', 'ExpressionStatement']);
    expect(parsed.comments[0]).to.equal(
      '// Generated from a\\u2028process.exit(7)//.ts by reading its code (it was not run to write these cases).',
    );
    // Reasons have their whitespace (U+2029 included) collapsed to spaces before they are escaped.
    expect(parsed.comments.join('\n')).to.include('line 3: the call at b process.exit(8)//.ts:3 is not literal');
    // The import still names the real file.
    expect(specifiersOf(parsed)).to.deep.equal(['chai', '../../a\u2028process.exit(7)//.ts']);
  });

  it('unit generator end to end: a module path that survives normalisation runs nothing, ESM and CommonJS', async () => {
    const modulePath = 'src/a\u2028process.exit(7);\u2028/*/x.js';
    for (const moduleSystem of ['esm', 'cjs'] as const) {
      for (const framework of ['mocha', 'node:test', 'vitest', 'jest'] as const) {
        const result = await generateUnitTests(unitRequest({ modulePath, moduleSystem, framework }));
        const parsed = readGenerated(result.files[0]!.content, 'generated.spec.js');
        expect(parsed.callees, `${framework} ${moduleSystem}`).to.not.include(EXIT);
        expect(parsed.syntaxErrors, `${framework} ${moduleSystem}`).to.deep.equal([]);
        expect(specifiersOf(parsed), `${framework} ${moduleSystem}`).to.include(`../../${modulePath}`);
      }
    }
  });

  it('unit renderer: `*/` and bidi overrides in a path are shown escaped, and nothing invisible reorders the file', async () => {
    const modulePath = 'src/\u202eevil*/x\u2066y\u2069.js';
    const result = await generateUnitTests(unitRequest({ modulePath }));
    const code = result.files[0]!.content;
    const parsed = readGenerated(code, 'generated.spec.js');
    expect(code).to.not.match(BIDI_CONTROL);
    expect(parsed.comments.filter((c) => c.slice(2).includes('*/'))).to.deep.equal([]);
    expect(parsed.comments[0]).to.equal(
      '// Generated from src/\\u202eevil*\\/x\\u2066y\\u2069.js by reading its code (it was not run to write these cases).',
    );
    expect(parsed.syntaxErrors).to.deep.equal([]);
    expect(specifiersOf(parsed)).to.deep.equal(['chai', `../../${modulePath}`]);
  });

  it('unit generator: an exported error class whose name the parser took with a bidi override in it is never written bare', async () => {
    const source =
      "export class Bad\u202eError extends Error {}\nexport function f(x) {\n  if (x > 1) throw new Bad\u202eError('too big');\n  return 1;\n}\n";
    const result = await generateUnitTests(unitRequest({ component: 'f', source, modulePath: 'src/f.js', coverage: 'comprehensive' }));
    const code = result.files[0]!.content;
    const parsed = readGenerated(code, 'generated.spec.js');
    expect(code).to.not.match(BIDI_CONTROL);
    expect(parsed.syntaxErrors).to.deep.equal([]);
    expect(parsed.statements).to.deep.equal(['ImportDeclaration', 'ImportDeclaration', 'ExpressionStatement']);
    // The error is still asserted, by its message.
    expect(code).to.include("expect(() => f(2)).to.throw('too big');");
    expect(code).to.include('import { f } from ');
  });

  it('e2e renderer: a component name with a line break, U+2028, `*/` or bidi overrides stays inside the header comment', () => {
    const names = [
      'AddToCart\nprocess.exit(7)//',
      'AddToCart\u2028process.exit(7)//',
      'AddToCart\u2029process.exit(7)//',
      'AddToCart\r\nprocess.exit(7)//',
      'Add*/process.exit(7)/*\u202eButton\u2066',
    ];
    for (const component of names) {
      const tests = playwrightTests({ component, testType: 'e2e', coverage: 'exhaustive', facts: samplePageFacts() });
      const code = tests.files[0]!.content;
      const parsed = readGenerated(code);
      expect(parsed.callees, JSON.stringify(component)).to.not.include(EXIT);
      expect(parsed.syntaxErrors, JSON.stringify(component)).to.deep.equal([]);
      expect(parsed.statements, JSON.stringify(component)).to.deep.equal(['ImportDeclaration', 'VariableStatement', 'ExpressionStatement']);
      expect(code, JSON.stringify(component)).to.not.match(BIDI_CONTROL);
      // The describe block is titled with the name itself.
      expect(stringsOf(parsed), JSON.stringify(component)).to.include(component);
    }
  });

  it("e2e renderer: page text, selectors and URLs are literals whose values are the page's own, with nothing invisible left raw", () => {
    const text = 'Add\u202e to cart\u2028';
    const facts = samplePageFacts({ finalUrl: 'http://127.0.0.1:3000/#\u2028process.exit(7)//' });
    facts.located = { ...facts.located!, locator: { kind: 'text', text }, accessibleName: text, text };
    const code = playwrightTests({ component: 'AddToCartButton', testType: 'e2e', coverage: 'exhaustive', facts }).files[0]!.content;
    const parsed = readGenerated(code);
    expect(parsed.callees).to.not.include(EXIT);
    expect(parsed.syntaxErrors).to.deep.equal([]);
    expect(code).to.not.match(BIDI_CONTROL);
    expect(code).to.not.match(/[\u2028\u2029]/);
    const strings = stringsOf(parsed);
    expect(strings).to.include(text);
    expect(strings).to.include(`is named ${text}`);
    expect(strings).to.include(facts.finalUrl);
  });

  it('run commands quote a path a shell would expand', async () => {
    const result = await generateUnitTests(unitRequest({ component: '$add', source: ADD.replace('function add', 'function $add') }));
    expect(result.runCommand).to.equal("npx mocha 'test/generated/$add.unit.spec.js'");
    expect(result.files[0]!.content).to.include("// Run: npx mocha 'test/generated/$add.unit.spec.js'");
    const plain = await generateUnitTests(unitRequest({}));
    expect(plain.runCommand).to.equal('npx mocha test/generated/add.unit.spec.js');
  });
});
