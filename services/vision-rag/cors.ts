import type { RequestHandler } from 'express';

/**
 * CORS for the API, as the specification fixes it: any origin, these methods and exactly these
 * request headers. A preflight is answered before the gate (it carries no key); since a browser may
 * send only Content-Type and Authorization, the key is accepted as `Authorization: Bearer svc_…`.
 */
export const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, POST, PUT, DELETE, OPTIONS',
  'Access-Control-Allow-Headers': 'Content-Type, Authorization',
} as const;

export const cors: RequestHandler = (req, res, next) => {
  res.setHeader('Access-Control-Allow-Origin', CORS_HEADERS['Access-Control-Allow-Origin']);
  if (req.method !== 'OPTIONS') return next();
  res.setHeader('Access-Control-Allow-Methods', CORS_HEADERS['Access-Control-Allow-Methods']);
  res.setHeader('Access-Control-Allow-Headers', CORS_HEADERS['Access-Control-Allow-Headers']);
  res.setHeader('Access-Control-Max-Age', '600');
  res.status(204).end();
};
