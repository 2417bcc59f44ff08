/**
 * Why no test file could be generated; the HTTP face maps the code to a 4xx answer.
 */

export type GenerateErrorCode = 'COMPONENT_NOT_FOUND' | 'NOT_SUPPORTED' | 'NO_CASES';

export class GenerateError extends Error {
  override name = 'GenerateError';
  readonly code: GenerateErrorCode;
  /** for NO_CASES: what was tried and why each was left out */
  readonly skipped: ReadonlyArray<{ reason: string; line?: number }>;

  constructor(code: GenerateErrorCode, message: string, skipped: ReadonlyArray<{ reason: string; line?: number }> = []) {
    super(message);
    this.code = code;
    this.skipped = skipped;
  }
}
