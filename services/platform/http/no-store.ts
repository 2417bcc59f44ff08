import type { RequestHandler } from 'express';

/**
 * For answers that carry a credential (an API key, a session token): no browser, proxy or CDN may
 * keep a copy, whatever caching rules sit in front of the service.
 */
export const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  next();
};
