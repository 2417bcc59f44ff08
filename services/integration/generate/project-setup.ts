/**
 * What a project's package.json and a module's own text say about how its tests run: the framework
 * it already uses, and whether its modules are ES modules or CommonJS. Pure.
 */

export type UnitFramework = 'mocha' | 'vitest' | 'jest' | 'node:test';

/** The project's framework by its dependencies (vitest, then jest, then mocha), else mocha + chai. */
export function detectFramework(packageJson: string | null): UnitFramework {
  const deps = dependenciesOf(packageJson);
  if (deps.has('vitest')) return 'vitest';
  if (deps.has('jest') || deps.has('ts-jest') || deps.has('@jest/globals')) return 'jest';
  if (deps.has('mocha')) return 'mocha';
  return 'mocha';
}

export function moduleSystemOf(packageJson: string | null, modulePath: string, source: string): 'esm' | 'cjs' {
  if (/\.(mjs|mts)$/.test(modulePath)) return 'esm';
  if (/\.(cjs|cts)$/.test(modulePath)) return 'cjs';
  // The module's own syntax wins over the package's type: a file with `export` is an ES module.
  if (/^\s*export\s/m.test(source) || /^\s*import\s[^(]/m.test(source)) return 'esm';
  if (/\bmodule\.exports\b|\bexports\.\w+\s*=|\brequire\(/.test(source)) return 'cjs';
  return packageTypeOf(packageJson) === 'module' ? 'esm' : 'cjs';
}

function parse(packageJson: string | null): Record<string, unknown> {
  if (packageJson === null) return {};
  try {
    const parsed: unknown = JSON.parse(packageJson);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function dependenciesOf(packageJson: string | null): Set<string> {
  const pkg = parse(packageJson);
  const names = new Set<string>();
  for (const field of ['dependencies', 'devDependencies', 'peerDependencies']) {
    const deps = pkg[field];
    if (typeof deps === 'object' && deps !== null) for (const name of Object.keys(deps)) names.add(name);
  }
  return names;
}

const packageTypeOf = (packageJson: string | null): unknown => parse(packageJson).type;
