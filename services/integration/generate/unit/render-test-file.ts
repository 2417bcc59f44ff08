/**
 * The test file's text: the framework's imports, the module's import (ESM or CommonJS, named,
 * default or whole-module export), and one `it` per case in the framework's assertion style.
 */

import { commentText, identifier, jsString } from '../code-literals.ts';
import type { ExportKind } from './component.ts';
import type { Dialect } from './dialects.ts';
import type { PlannedCase, Skip } from './planner.ts';
import type { TestFile } from './test-paths.ts';

export interface TestFileInput {
  component: string;
  /** what the test calls it (differs when the name clashes with the framework's) */
  localName: string;
  exportKind: ExportKind;
  modulePath: string;
  specifier: string;
  testType: string;
  file: TestFile;
  dialect: Dialect;
  runCommand: string;
  awaited: boolean;
  cases: readonly PlannedCase[];
  skipped: readonly Skip[];
}

const MAX_LISTED_SKIPS = 12;

export function renderTestFile(input: TestFileInput): string {
  const lines: string[] = [];
  lines.push(`// Generated from ${commentText(input.modulePath)} by reading its code (it was not run to write these cases).`);
  lines.push(`// Run: ${commentText(input.runCommand)}`);
  if (input.skipped.length > 0) {
    lines.push('// Not covered here:');
    for (const skip of input.skipped.slice(0, MAX_LISTED_SKIPS))
      lines.push(`//   ${skip.line !== undefined ? `line ${skip.line}: ` : ''}${commentText(skip.reason.replace(/\s+/g, ' '))}`);
    if (input.skipped.length > MAX_LISTED_SKIPS) lines.push(`//   and ${input.skipped.length - MAX_LISTED_SKIPS} more`);
  }
  lines.push(...input.dialect.imports(input.file.esm));
  const extras = [...new Set(input.cases.flatMap((c) => c.expectation.imports))]
    .filter((n) => n !== input.component && n !== input.localName)
    .sort();
  lines.push(moduleImport(input, extras));
  lines.push('');
  lines.push(`describe(${title(`${input.component} (${input.testType})`)}, () => {`);
  input.cases.forEach((c, i) => {
    const body = input.dialect.assert(c.call, c.expectation.assertion, input.awaited);
    const isAsync = body.some((l) => /\bawait\b/.test(l));
    if (i > 0) lines.push('');
    lines.push(`  it(${title(c.name)}, ${isAsync ? 'async ' : ''}() => {`);
    for (const line of body) lines.push(`    ${line}`);
    lines.push('  });');
  });
  lines.push('});');
  return `${lines.join('\n')}\n`;
}

/** The names are written bare, so each must be an identifier (subjectOf only offers such names to import). */
function moduleImport(input: TestFileInput, extraNames: readonly string[]): string {
  const component = identifier(input.component);
  const localName = identifier(input.localName);
  const extras = extraNames.map(identifier);
  const { specifier, exportKind } = input;
  const from = jsString(specifier, "'");
  if (input.file.esm) {
    if (exportKind === 'named')
      return `import { ${[component === localName ? component : `${component} as ${localName}`, ...extras].join(', ')} } from ${from};`;
    return extras.length > 0 ? `import ${localName}, { ${extras.join(', ')} } from ${from};` : `import ${localName} from ${from};`;
  }
  if (exportKind === 'named')
    return `const { ${[component === localName ? component : `${component}: ${localName}`, ...extras].join(', ')} } = require(${from});`;
  if (exportKind === 'default') return `const { ${[`default: ${localName}`, ...extras].join(', ')} } = require(${from});`;
  return `const ${localName} = require(${from});`;
}

/** Titles quote code, so they take double quotes when that avoids escaping. */
function title(text: string): string {
  return jsString(text, text.includes("'") && !text.includes('"') ? '"' : "'");
}
