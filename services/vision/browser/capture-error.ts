/**
 * The one error type of the browser module. `code` is what an HTTP layer maps: BLOCKED_URL,
 * SELECTOR_NOT_FOUND, STEP_FAILED, TOO_LARGE and INVALID_REQUEST are the caller's fault (4xx); TIMEOUT and
 * NAVIGATION_FAILED are the target site's (502/504); POOL_BUSY, POOL_CLOSED and BROWSER_FAILED are ours (503).
 */
export const CAPTURE_ERROR_CODES = [
  'INVALID_REQUEST',
  'BLOCKED_URL',
  'TIMEOUT',
  'NAVIGATION_FAILED',
  'SELECTOR_NOT_FOUND',
  'STEP_FAILED',
  'TOO_LARGE',
  'POOL_BUSY',
  'POOL_CLOSED',
  'BROWSER_FAILED',
] as const;

export type CaptureErrorCode = (typeof CAPTURE_ERROR_CODES)[number];

export class CaptureError extends Error {
  readonly code: CaptureErrorCode;

  constructor(code: CaptureErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CaptureError';
    this.code = code;
  }
}

export const isCaptureError = (error: unknown, code?: CaptureErrorCode): error is CaptureError =>
  error instanceof CaptureError && (code === undefined || error.code === code);
