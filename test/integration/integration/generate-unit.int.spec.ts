import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateUnitTests } from '../../../services/integration/generate/unit/generate-unit-tests.ts';
import type { UnitTestRequest, UnitTestResult } from '../../../services/integration/generate/unit/generate-unit-tests.ts';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURE = join(REPO, 'test/fixtures/ui-kit');
const MOCHA = join(REPO, 'node_modules/mocha/bin/mocha.js');

interface Scenario {
  component: string;
  module: string;
  coverage: UnitTestRequest['coverage'];
  testType?: UnitTestRequest['testType'];
  framework?: 'mocha' | 'node:test';
  /** a deliberate bug the generated tests must catch: [text in the module, what it becomes] */
  bug: [string, string];
}

const SCENARIOS: Scenario[] = [
  { component: 'clampQuantity', module: 'src/cart/quantity.js', coverage: 'basic', bug: ['Math.floor(quantity)', 'Math.round(quantity)'] },
  { component: 'clampQuantity', module: 'src/cart/quantity.js', coverage: 'comprehensive', bug: ['quantity < 0', 'quantity < -1'] },
  { component: 'clampQuantity', module: 'src/cart/quantity.js', coverage: 'exhaustive', bug: ['return max;', 'return quantity;'] },
  { component: 'formatPrice', module: 'src/format/price.ts', coverage: 'basic', bug: ["USD: '$'", "USD: 'US$'"] },
  {
    component: 'formatPrice',
    module: 'src/format/price.ts',
    coverage: 'comprehensive',
    bug: ['!Number.isInteger(cents)', 'Number.isNaN(cents)'],
  },
  { component: 'formatPrice', module: 'src/format/price.ts', coverage: 'exhaustive', bug: ["return 'free'", "return 'gratis'"] },
  {
    component: 'AddToCartButton',
    module: 'src/components/add-to-cart-button.js',
    coverage: 'comprehensive',
    testType: 'integration',
    bug: ['if (!productId)', 'if (productId === null)'],
  },
  {
    component: 'clampQuantity',
    module: 'src/cart/quantity.js',
    coverage: 'exhaustive',
    framework: 'node:test',
    bug: ['quantity < 0', 'quantity < -1'],
  },
  {
    component: 'formatPrice',
    module: 'src/format/price.ts',
    coverage: 'exhaustive',
    framework: 'node:test',
    bug: ["return 'free'", "return 'gratis'"],
  },
];

interface Run {
  code: number;
  passed: number;
  failed: number;
  output: string;
}

function run(args: string[], cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd, timeout: 30_000, env: { ...process.env, NO_COLOR: '1' } }, (error, stdout, stderr) => {
      const output = `${stdout}\n${stderr}`;
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      // mocha's spec reporter: "N passing" / "N failing"; node --test's tap reporter: "# pass N" / "# fail N".
      const count = (...patterns: RegExp[]): number => {
        for (const p of patterns) {
          const m = p.exec(output);
          if (m?.[1]) return Number(m[1]);
        }
        return 0;
      };
      resolve({ code, passed: count(/(\d+) passing/, /^# pass (\d+)/m), failed: count(/(\d+) failing/, /^# fail (\d+)/m), output });
    });
  });
}

function runTests(framework: Scenario['framework'], file: string, cwd: string): Promise<Run> {
  if (framework === 'node:test') return run(['--test', '--test-reporter=tap', file], cwd);
  return run([MOCHA, '--no-config', file], cwd);
}

describe('generated unit tests, run for real (integration)', function () {
  this.timeout(60_000);
  let dir: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'generate-unit-'));
  });

  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** A copy of the fixture whose node_modules is the repository's (chai and mocha resolve). */
  function project(name: string): string {
    const root = join(dir, name);
    cpSync(FIXTURE, root, { recursive: true, filter: (src) => !src.split(/[\\/]/).includes('node_modules') });
    symlinkSync(join(REPO, 'node_modules'), join(root, 'node_modules'), 'dir');
    return root;
  }

  function generate(s: Scenario): Promise<UnitTestResult> {
    return generateUnitTests({
      component: s.component,
      source: readFileSync(join(FIXTURE, s.module), 'utf8'),
      modulePath: s.module,
      testType: s.testType ?? 'unit',
      coverage: s.coverage,
      framework: s.framework ?? 'mocha',
      moduleSystem: 'esm',
      usages: [{ path: 'src/shop.js', source: readFileSync(join(FIXTURE, 'src/shop.js'), 'utf8') }],
    });
  }

  for (const s of SCENARIOS) {
    const label = `${s.component} ${s.testType ?? 'unit'} ${s.coverage} with ${s.framework ?? 'mocha'}`;
    it(`${label}: passes against the fixture and fails once it has a bug`, async () => {
      const result = await generate(s);
      expect(result.files).to.have.length(1);
      const file = result.files[0] as { path: string; content: string };
      expect(result.cases.length).to.be.greaterThan(0);

      const root = project(label.replace(/[^\w]+/g, '-'));
      mkdirSync(join(root, dirname(file.path)), { recursive: true });
      writeFileSync(join(root, file.path), file.content);

      const clean = await runTests(s.framework, file.path, root);
      expect(clean.code, clean.output).to.equal(0);
      expect(clean.passed, clean.output).to.equal(result.cases.length);
      expect(clean.failed, clean.output).to.equal(0);

      const modulePath = join(root, s.module);
      const source = readFileSync(modulePath, 'utf8');
      expect(source, 'the bug to plant is in the fixture').to.include(s.bug[0]);
      writeFileSync(
        modulePath,
        source.replace(s.bug[0], () => s.bug[1]),
      );

      const buggy = await runTests(s.framework, file.path, root);
      expect(buggy.code, buggy.output).to.not.equal(0);
      expect(buggy.failed, buggy.output).to.be.at.least(1);
    });
  }

  it('AddToCartButton: the integration test covers the guard and leaves the DOM path to an e2e test', async () => {
    const result = await generate(SCENARIOS.find((s) => s.component === 'AddToCartButton') as Scenario);
    expect(result.cases.map((c) => c.kind)).to.deep.equal(['error']);
    expect(result.skipped.map((s) => s.reason)).to.include("the happy path: needs a browser DOM: generate an e2e test with the page's url");
    expect(
      result.skipped.some(
        (s) =>
          s.reason.startsWith('the call at src/shop.js:8') &&
          s.reason.endsWith("needs a browser DOM: generate an e2e test with the page's url"),
      ),
    ).to.equal(true);
  });
});
