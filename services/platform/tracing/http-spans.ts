import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_SCHEME,
} from '@opentelemetry/semantic-conventions';
import { extractTraceContext } from '../../../events/trace-headers.ts';
import { activeTracer } from '../../../events/tracer.ts';

/** The face a span came in through (accounts, keys, webhooks, ...): several run in one process. */
export const SERVICE_ATTRIBUTE = 'svc.service';

/** Probes and scrapes: every few seconds from every prober, they would bury the traces that matter. */
const UNTRACED_PATHS = new Set(['/health', '/health/live', '/metrics']);

/** What Express leaves on a request it routed. */
interface Routed {
  route?: { path?: unknown };
  baseUrl?: string;
}

/**
 * A server span around each request an Express app answers, the child of the caller's
 * `traceparent` when it sends one. Its name and `http.route` are the route's template
 * (`POST /webhooks/payment`), never the path as sent, and no query, header or body goes into it:
 * those carry keys, tokens and addresses. Without a tracer the app is called as it is.
 */
export function tracedRequests(service: string, app: RequestListener): RequestListener {
  return (req, res) => {
    const tracer = activeTracer();
    if (!tracer || UNTRACED_PATHS.has(pathOf(req))) return app(req, res);
    const method = knownMethod(req.method);
    const span = tracer.startSpan(
      method,
      {
        kind: SpanKind.SERVER,
        attributes: { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_URL_SCHEME]: 'http', [SERVICE_ATTRIBUTE]: service },
      },
      extractTraceContext(req.headers),
    );
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const route = routeOf(req as IncomingMessage & Routed);
      if (route !== undefined) {
        span.setAttribute(ATTR_HTTP_ROUTE, route);
        span.updateName(`${method} ${route}`);
      }
      finish(span, res);
      span.end();
    };
    res.once('finish', end);
    res.once('close', end);
    context.with(trace.setSpan(context.active(), span), () => app(req, res));
  };
}

function finish(span: Span, res: ServerResponse): void {
  if (!res.writableFinished && !res.headersSent) {
    // The connection closed before an answer: the client gave up, or the server cut it.
    span.setAttribute(ATTR_ERROR_TYPE, 'aborted');
    span.setStatus({ code: SpanStatusCode.ERROR });
    return;
  }
  span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, res.statusCode);
  if (res.statusCode >= 500) {
    span.setAttribute(ATTR_ERROR_TYPE, String(res.statusCode));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
}

function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

function routeOf(req: IncomingMessage & Routed): string | undefined {
  const path = req.route?.path;
  if (typeof path !== 'string') return undefined;
  return `${req.baseUrl ?? ''}${path}`;
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);

/** The conventions' rule: a method outside the known set is recorded as _OTHER (a client chooses it). */
const knownMethod = (method: string | undefined): string => (method !== undefined && METHODS.has(method) ? method : '_OTHER');
