import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { isTransient } from '../../../events/errors.ts';
import type { Logger } from '../logger.ts';
import { keysEqualConstantTime } from '../secrets.ts';
import { liveness, readiness, withoutDetails, type HealthSource } from '../health.ts';
import { metricsHandler, metricsMiddleware } from '../metrics.ts';
import { HttpError } from './errors.ts';
import type { TrustProxy } from './trust-proxy.ts';
import { newRequestId } from './request-id.ts';

export interface AppOptions {
  service: string;
  log: Logger;
  bodyLimit: string;
  health: HealthSource;
  /** Whoever presents this as a bearer token sees why a check failed; nobody else does. */
  healthDetailsToken?: string;
  /** Routes that need the raw body (signature checks) mount their own parser before the JSON one. */
  beforeJson?: (app: Express) => void;
  /** A service's own error body around `{error, code}` (the RAG API adds `success: false`); default as is. */
  errorBody?: (body: ErrorBody) => Record<string, unknown>;
  /** Replaces the platform's GET /health (a service whose specification fixes its shape). */
  healthRoute?: (app: Express) => void;
  /** Peers whose X-Forwarded-For names the client (TRUST_PROXY); default loopback. */
  trustProxy?: TrustProxy;
  /**
   * Serve GET /metrics (the whole process's registry). Only private listeners do: on a public face
   * it told anyone the routes, their traffic and latencies, the consumer lag and the process's memory.
   */
  metrics?: boolean;
}

export interface ErrorBody {
  error: string;
  code: string;
  [detail: string]: unknown;
}

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    log: Logger;
  }
}

/**
 * Every service's Express app: request ids, JSON bodies with a size limit, latency metrics,
 * /health (and /metrics on a private listener), and JSON error bodies for everything that goes wrong.
 */
export function createApp(options: AppOptions, mount: (app: Express) => void): Express {
  const app = express();
  app.disable('x-powered-by');
  // Answers are JSON to API calls, mostly POSTs: a hash of every body for conditional GETs nobody makes.
  app.set('etag', false);
  app.set('trust proxy', options.trustProxy ?? ['loopback']);
  lazyRequestLogger(app, options);
  app.use(requestContext());
  app.use(metricsMiddleware(options.service));
  if (options.healthRoute) options.healthRoute(app);
  else
    app.get('/health', async (req, res) => {
      const report = await readiness(options.health);
      const presented = /^Bearer\s+(\S+)$/i.exec(req.get('authorization') ?? '')?.[1];
      const trusted =
        options.healthDetailsToken !== undefined && presented !== undefined && keysEqualConstantTime(presented, options.healthDetailsToken);
      res.setHeader('Cache-Control', 'no-store');
      res.status(report.status === 'ok' ? 200 : 503).json({ service: options.service, ...(trusted ? report : withoutDetails(report)) });
    });
  app.get('/health/live', (_req, res) => {
    const live = liveness(options.health);
    res.setHeader('Cache-Control', 'no-store');
    res.status(live.status === 'ok' ? 200 : 503).json({ service: options.service, status: live.status });
  });
  if (options.metrics === true) app.get('/metrics', metricsHandler);
  options.beforeJson?.(app);
  app.use(express.json({ limit: options.bodyLimit, strict: true, type: ['application/json', 'application/*+json'] }));
  mount(app);
  const shape = options.errorBody ?? ((body: ErrorBody) => body);
  app.use((req, res) => {
    res.status(404).json(shape({ error: `no route for ${req.method} ${req.path}`, code: 'NOT_FOUND' }));
  });
  app.use(errorHandler(options.log, shape));
  return app;
}

/** A caller's X-Request-Id when it is a plain token (it goes into logs and headers), else a new one. */
export function requestIdOf(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && /^[\w.-]{1,128}$/.test(incoming) ? incoming : newRequestId();
}

function requestContext(): RequestHandler {
  return (req, res, next) => {
    req.id = requestIdOf(req.headers['x-request-id']);
    res.setHeader('X-Request-Id', req.id);
    next();
  };
}

const REQUEST_LOG = Symbol('request log');

/** req.log, a child logger with the request id, made on first use: most requests never log. */
function lazyRequestLogger(app: Express, options: AppOptions): void {
  Object.defineProperty(app.request, 'log', {
    configurable: true,
    get(this: Express['request'] & { [REQUEST_LOG]?: Logger }) {
      // A service's logger mostly has its name bound already; pino would write the key twice.
      const bindings =
        options.log.bindings().service === options.service ? { requestId: this.id } : { service: options.service, requestId: this.id };
      return (this[REQUEST_LOG] ??= options.log.child(bindings));
    },
    set(this: Express['request'] & { [REQUEST_LOG]?: Logger }, value: Logger) {
      this[REQUEST_LOG] = value;
    },
  });
}

interface BodyParserError {
  type?: string;
  status?: number;
  expose?: boolean;
}

/**
 * The status of a client's fault that Express or body-parser found before any route ran (a body
 * whose Content-Encoding does not decode, a body cut short, a path parameter that is not valid
 * percent-encoding): http-errors marks those `expose` with a 4xx status, the router its URIError. Their messages may quote
 * the request, so the answer says only what kind of fault it was.
 */
function clientFault(err: unknown): number | undefined {
  const e = err as BodyParserError | null;
  // The router marks a path parameter it cannot decode with status 400 but not `expose`.
  if (e?.expose !== true && !(err instanceof URIError)) return undefined;
  if (typeof e?.status !== 'number' || !Number.isInteger(e.status) || e.status < 400 || e.status > 499) return undefined;
  return e.status;
}

function errorHandler(log: Logger, shape: (body: ErrorBody) => Record<string, unknown>): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const l = req.log ?? log;
    if (err instanceof HttpError) {
      res
        .set(err.headers)
        .status(err.status)
        .json(shape({ error: err.message, code: err.code, ...err.details }));
      return;
    }
    const parserType = (err as BodyParserError | null)?.type;
    if (parserType === 'entity.too.large') {
      res.status(413).json(shape({ error: 'request body is too large', code: 'PAYLOAD_TOO_LARGE' }));
      return;
    }
    if (parserType === 'entity.parse.failed') {
      res.status(400).json(shape({ error: 'request body is not valid JSON', code: 'MALFORMED_JSON' }));
      return;
    }
    if (parserType === 'encoding.unsupported' || parserType === 'charset.unsupported') {
      res.status(415).json(shape({ error: 'unsupported body encoding', code: 'UNSUPPORTED_MEDIA_TYPE' }));
      return;
    }
    const fault = clientFault(err);
    if (fault !== undefined) {
      res.status(fault).json(
        shape({
          error: 'the request could not be read (its encoding, framing or path)',
          code: fault === 400 ? 'BAD_REQUEST' : 'CLIENT_ERROR',
        }),
      );
      return;
    }
    const answer = faultAnswer(err, req.id, l);
    res.set(answer.headers).status(answer.status).json(shape(answer.body));
  };
}

/**
 * The answer to a failure no route turned into one: 503 with Retry-After when a dependency is out
 * (logged as a warning), else 500 with the request id (logged as an error, with its stack).
 */
export function faultAnswer(
  err: unknown,
  requestId: string,
  log: Logger,
): { status: number; headers: Record<string, string>; body: ErrorBody } {
  if (isTransient(err)) {
    log.warn({ err: (err as Error).message }, 'dependency unavailable');
    return {
      status: 503,
      headers: { 'Retry-After': '5' },
      body: { error: 'a dependency is unavailable; retry shortly', code: 'UNAVAILABLE' },
    };
  }
  log.error({ err }, 'unhandled error');
  return { status: 500, headers: {}, body: { error: 'internal error', code: 'INTERNAL', requestId } };
}
