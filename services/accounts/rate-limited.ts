import { RateLimiterRes } from 'rate-limiter-flexible';
import { HttpError, unavailable } from '../platform/http/errors.ts';

/** The 429 every account limit answers: `{error, code: RATE_LIMITED}` and Retry-After in seconds. */
export function rateLimited(message: string, msBeforeNext: number): HttpError {
  return new HttpError(429, 'RATE_LIMITED', message, {
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(msBeforeNext / 1000))) },
  });
}

/**
 * Takes one point from `key`'s bucket, or throws rateLimited(message) when it is empty. Fails
 * closed: when the shared count cannot be read (the database is away) the attempt is refused with
 * a 503, never let through uncounted, so an outage does not become unlimited guessing.
 */
export async function consumeOrLimit(limiter: { consume(key: string): Promise<unknown> }, key: string, message: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (err) {
    if (err instanceof RateLimiterRes) throw rateLimited(message, err.msBeforeNext);
    throw unavailable('the attempt could not be counted; retry shortly');
  }
}
