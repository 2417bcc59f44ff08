/**
 * Unit and integration test generation as a task of the generation pool (services/platform/work):
 * parsing the customer's module with tree-sitter, planning, solving and rendering cost CPU without
 * bound on what the module holds, so they run on a worker thread with a time and heap budget, never
 * on the event loop that answers requests. The input is the texts already read; nothing here reads
 * a file or the network.
 */

import { task } from '../../../platform/work/task.ts';
import { detectFramework, moduleSystemOf, type UnitFramework } from '../project-setup.ts';
import { GenerateError, type GenerateErrorCode } from './generate-error.ts';
import { generateUnitTests, type UnitTestRequest, type UnitTestResult } from './generate-unit-tests.ts';

export interface GenerateTaskInput {
  component: string;
  /** Project-relative path of the component's module. */
  modulePath: string;
  /** The module's text. */
  source: string;
  /** The project's package.json, or null when it has none. */
  packageJson: string | null;
  /** The framework asked for; absent: the project's own, from its package.json. */
  framework?: UnitFramework;
  testType: UnitTestRequest['testType'];
  coverage: UnitTestRequest['coverage'];
  usages: UnitTestRequest['usages'];
}

/**
 * The generated file, or why none could be: a refusal travels as data (a thrown error would reach
 * the caller as a TaskError with only its name, message and code).
 */
export type GenerateTaskOutput =
  | { readonly ok: true; readonly tests: UnitTestResult }
  | {
      readonly ok: false;
      readonly code: GenerateErrorCode;
      readonly message: string;
      readonly skipped: ReadonlyArray<{ reason: string; line?: number }>;
    };

export async function generateTestsTask(input: GenerateTaskInput): Promise<GenerateTaskOutput> {
  try {
    const tests = await generateUnitTests({
      component: input.component,
      source: input.source,
      modulePath: input.modulePath,
      testType: input.testType,
      coverage: input.coverage,
      framework: input.framework ?? detectFramework(input.packageJson),
      // Its regular expressions run over the module's whole text: customer input, so here too.
      moduleSystem: moduleSystemOf(input.packageJson, input.modulePath, input.source),
      usages: input.usages,
    });
    return { ok: true, tests };
  } catch (err) {
    if (err instanceof GenerateError)
      return { ok: false, code: err.code, message: err.message, skipped: err.skipped.map((s) => ({ ...s })) };
    throw err;
  }
}

export const GENERATE_TESTS = task<GenerateTaskInput, GenerateTaskOutput>(new URL(import.meta.url), 'generateTestsTask');
