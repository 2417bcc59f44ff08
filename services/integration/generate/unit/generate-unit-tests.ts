/**
 * Unit and integration tests for a JavaScript or TypeScript function or class, written from its
 * source alone: the module is parsed, never imported or run (it is customer code on our server).
 * Every case's arguments are checked by the generator's own evaluator to reach what the case
 * asserts; what it cannot justify is returned in `skipped` with the reason, never emitted.
 */

import { detectLanguage } from '../../../rag/chunking/languages.ts';
import type { Grammar } from '../../../rag/chunking/languages.ts';
import { parserFor } from '../../../rag/chunking/parsers.ts';
import { isIdentifier } from '../code-literals.ts';
import { addExamples, addHappyPath } from './basic-cases.ts';
import { addBranchCases } from './branch-cases.ts';
import { findComponent } from './component.ts';
import { dialectFor } from './dialects.ts';
import { examplesOf } from './examples.ts';
import { GenerateError } from './generate-error.ts';
import { unloadableSyntax, unreadableLine } from './node-loadable.ts';
import { Planner } from './planner.ts';
import type { CaseKind } from './planner.ts';
import { renderTestFile } from './render-test-file.ts';
import { DOM_REASON, subjectOf } from './subject.ts';
import { importSpecifier, normalizeModulePath, runCommandFor, testFileFor } from './test-paths.ts';
import type { Framework, ModuleSystem } from './test-paths.ts';
import { addUsages } from './usage-cases.ts';
import { usagesOf } from './usages.ts';

export { GenerateError } from './generate-error.ts';
export type { GenerateErrorCode } from './generate-error.ts';

export interface UnitTestRequest {
  /** exported name: function, arrow/function-expression const, or class */
  component: string;
  /** the module's text */
  source: string;
  /** project-relative path of the module, e.g. 'src/cart/quantity.js' */
  modulePath: string;
  testType: 'unit' | 'integration';
  coverage: 'basic' | 'comprehensive' | 'exhaustive';
  framework: Framework;
  /** from package.json "type" and the module's own syntax */
  moduleSystem: ModuleSystem;
  /** Other project files that use the component (for integration: the calls the project makes). */
  usages: Array<{ path: string; source: string }>;
}

export interface GeneratedCase {
  name: string;
  kind: CaseKind;
  /** 1-based line the case comes from: in the module, or in the using file for a `usage` case */
  line: number;
}

export interface UnitTestResult {
  files: Array<{ path: string; content: string }>;
  framework: string;
  runCommand: string;
  cases: GeneratedCase[];
  skipped: Array<{ reason: string; line?: number }>;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const SCRIPT_GRAMMARS: ReadonlySet<Grammar> = new Set(['javascript', 'typescript', 'tsx']);

export async function generateUnitTests(request: UnitTestRequest): Promise<UnitTestResult> {
  const { component: name, testType, coverage, framework, moduleSystem } = request;
  if (!IDENTIFIER.test(name) || !isIdentifier(name))
    throw new GenerateError('COMPONENT_NOT_FOUND', `${JSON.stringify(name)} is not a name a module can export and a test can import`);
  const modulePath = normalizeModulePath(request.modulePath);
  const language = detectLanguage(modulePath, request.source);
  if (language.chunker !== 'code' || !SCRIPT_GRAMMARS.has(language.grammar)) {
    throw new GenerateError(
      'NOT_SUPPORTED',
      `${modulePath} is ${language.id}: unit tests are generated for JavaScript and TypeScript modules`,
    );
  }
  const file = testFileFor(name, testType, modulePath, framework, moduleSystem);
  const parser = await parserFor(language.grammar);
  const tree = parser.parse(request.source);
  if (!tree) throw new GenerateError('NOT_SUPPORTED', `${modulePath} could not be parsed`);
  try {
    const facts = findComponent(tree.rootNode, name, modulePath);
    if (facts.importDomLine !== undefined) {
      throw new GenerateError('NOT_SUPPORTED', `importing ${modulePath} runs browser code at line ${facts.importDomLine}: ${DOM_REASON}`);
    }
    const { component } = facts;
    const componentNode = component.fn ?? component.classNode;
    const unreadable = componentNode ? unreadableLine(componentNode) : undefined;
    if (unreadable !== undefined)
      throw new GenerateError(
        'NOT_SUPPORTED',
        `the parser could not read ${name} at line ${unreadable} of ${modulePath}, so its branches cannot be analysed`,
      );
    if (framework === 'mocha' || framework === 'node:test') {
      const unloadable = unloadableSyntax(tree.rootNode);
      if (unloadable) {
        throw new GenerateError(
          'NOT_SUPPORTED',
          `${modulePath} has ${unloadable.what} (line ${unloadable.line}), which Node cannot load without a transform, so ${framework} cannot import it: use vitest or jest`,
        );
      }
    }
    const subject = subjectOf(component, facts, file.typescript);
    const planner = new Planner(subject);

    const examples = await examplesOf(component.doc.examples, name, component.kind === 'class', language.grammar);
    addExamples(planner, examples);
    if (!planner.cases.some((c) => c.kind === 'example')) addHappyPath(planner);
    if (coverage !== 'basic') addBranchCases(planner, coverage);
    if (testType === 'integration') addUsages(planner, await usagesOf(request.usages, name, component.kind === 'class'));
    if (coverage === 'exhaustive') for (const u of subject.flow.uncovered) planner.skip(u.reason, u.line);
    if (component.kind === 'class') {
      if (component.methods.length > 0)
        planner.skip(
          `the methods of ${name} (${component.methods.join(', ')}) are not covered: the cases construct it, which runs only the constructor`,
          component.line,
        );
      if (component.extendsClass)
        planner.skip(`${name} extends another class whose constructor the generator does not read`, component.line);
    }

    if (planner.cases.length === 0) {
      const why = planner.skipped.map((s) => (s.line !== undefined ? `line ${s.line}: ${s.reason}` : s.reason)).join('; ');
      throw new GenerateError(
        'NO_CASES',
        `no runnable ${testType} case could be derived for ${name} at ${coverage} coverage${why ? `: ${why}` : ''}`,
        planner.skipped,
      );
    }

    const runCommand = runCommandFor(framework, file.path, file);
    const content = renderTestFile({
      component: name,
      localName: subject.localName,
      exportKind: component.exportKind,
      modulePath,
      specifier: importSpecifier(file.path, modulePath),
      testType,
      file,
      dialect: dialectFor(framework),
      runCommand,
      awaited: subject.awaited,
      cases: planner.cases,
      skipped: planner.skipped,
    });
    return {
      files: [{ path: file.path, content }],
      framework,
      runCommand,
      cases: planner.cases.map((c) => ({ name: c.name, kind: c.kind, line: c.line })),
      skipped: planner.skipped.map((s) => ({ ...s })),
    };
  } finally {
    tree.delete();
  }
}
