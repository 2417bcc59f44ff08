import { HttpError } from '../../platform/http/errors.ts';
import { isCaptureError, type CaptureErrorCode } from '../browser/capture-error.ts';

/** How a capture's failure reads over HTTP: the caller's fault, the target site's, or ours. */
const STATUS: Record<CaptureErrorCode, number> = {
  INVALID_REQUEST: 400,
  BLOCKED_URL: 400,
  SELECTOR_NOT_FOUND: 422,
  STEP_FAILED: 422,
  TOO_LARGE: 422,
  NAVIGATION_FAILED: 502,
  TIMEOUT: 504,
  POOL_BUSY: 503,
  POOL_CLOSED: 503,
  BROWSER_FAILED: 503,
};

/** A CaptureError as the HttpError the faces answer with; anything else unchanged. */
export function captureFailure(err: unknown): unknown {
  if (!isCaptureError(err)) return err;
  const status = STATUS[err.code];
  // The browser's own failures may name paths of this host; the caller gets the code and a plain reason.
  const message = status === 503 ? 'the browser is unavailable or busy; retry shortly' : err.message.slice(0, 500);
  return new HttpError(status, err.code, message, status === 503 ? { headers: { 'Retry-After': '5' } } : {});
}
