/**
 * Where the generated test goes, how it imports the module, and the command that runs it.
 */

import { posix } from 'node:path';
import { shellWord } from '../code-literals.ts';
import { GenerateError } from './generate-error.ts';

export type Framework = 'mocha' | 'vitest' | 'jest' | 'node:test';
export type ModuleSystem = 'esm' | 'cjs';

export interface TestFile {
  path: string;
  /** the test is TypeScript (the module is) */
  typescript: boolean;
  /** the test file uses `import` (else `require`) */
  esm: boolean;
}

/** Frameworks that load files through Node itself, which strips TypeScript types but not JSX. */
const NODE_LOADED: ReadonlySet<Framework> = new Set(['mocha', 'node:test']);

export function normalizeModulePath(modulePath: string): string {
  const normal = posix.normalize(modulePath.replace(/\\/g, '/')).replace(/^\.\//, '');
  if (normal.startsWith('/') || normal === '..' || normal.startsWith('../')) {
    throw new GenerateError('NOT_SUPPORTED', `modulePath must be relative to the project root, not ${modulePath}`);
  }
  return normal;
}

export function testFileFor(
  component: string,
  testType: string,
  modulePath: string,
  framework: Framework,
  moduleSystem: ModuleSystem,
): TestFile {
  const ext = posix.extname(modulePath).slice(1).toLowerCase();
  if ((ext === 'tsx' || ext === 'jsx') && NODE_LOADED.has(framework)) {
    throw new GenerateError(
      'NOT_SUPPORTED',
      `${modulePath} is .${ext}, which ${framework} cannot load under plain Node: use vitest or jest (they transform JSX)`,
    );
  }
  const typescript = ext === 'ts' || ext === 'tsx' || ext === 'mts' || ext === 'cts';
  // vitest transforms every test as ESM; the others follow the project's module system.
  const esm = framework === 'vitest' || moduleSystem === 'esm';
  let testExt: string;
  if (typescript) testExt = ext === 'mts' || ext === 'cts' ? ext : 'ts';
  else if (esm) testExt = ext === 'mjs' || ext === 'cjs' ? 'mjs' : 'js';
  else testExt = ext === 'mjs' || ext === 'cjs' ? 'cjs' : 'js';
  return { path: `test/generated/${component}.${testType}.spec.${testExt}`, typescript, esm };
}

/** `../../src/cart/quantity.js` from `test/generated/x.spec.js`: the module's own extension kept. */
export function importSpecifier(testPath: string, modulePath: string): string {
  const relative = posix.relative(posix.dirname(testPath), modulePath);
  return relative.startsWith('.') ? relative : `./${relative}`;
}

export function runCommandFor(framework: Framework, testPath: string, file: TestFile): string {
  // The name in the path is an identifier, and `$` in one would expand in the customer's shell.
  const path = shellWord(testPath);
  switch (framework) {
    case 'mocha':
      return `npx mocha ${path}`;
    case 'vitest':
      return `npx vitest run ${path}`;
    case 'jest':
      // Jest runs ES modules only with Node's VM modules flag (TypeScript goes through the project's transform).
      return file.esm && !file.typescript ? `NODE_OPTIONS=--experimental-vm-modules npx jest ${path}` : `npx jest ${path}`;
    case 'node:test':
      return `node --test ${path}`;
  }
}
