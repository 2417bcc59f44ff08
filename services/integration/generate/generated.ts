/** Generated test files, as POST /api/integration/generate answers them. */

export interface GeneratedFile {
  /** Relative to the project's root. */
  path: string;
  content: string;
  /** Binary files (a visual test's baseline PNG) travel as base64; text files as they are. */
  encoding?: 'base64';
}

export interface TestCase {
  name: string;
  kind: 'happy' | 'example' | 'error' | 'boundary' | 'branch' | 'usage' | 'state' | 'interaction' | 'visual';
  /** The line of the component's module a code-derived case comes from (1-based). */
  line?: number;
}

export interface GeneratedTests {
  files: GeneratedFile[];
  framework: string;
  runCommand: string;
  cases: TestCase[];
  /** What was not turned into a case, and why. */
  skipped: Array<{ reason: string; line?: number }>;
}
