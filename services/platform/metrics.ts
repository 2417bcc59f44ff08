import client from 'prom-client';
import type { RequestHandler } from 'express';

let defaultsCollected = false;

export const httpMetrics = {
  duration: new client.Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP request latency by service, route and status',
    labelNames: ['service', 'method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  }),
};

export function collectDefaultMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  client.collectDefaultMetrics({ prefix: 'svc_' });
}

export function metricsMiddleware(service: string): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      // The matched route pattern, never the raw URL: keeps label cardinality bounded.
      const route = (req.route as { path?: string } | undefined)?.path ?? (res.statusCode === 404 ? 'unmatched' : req.baseUrl || 'other');
      httpMetrics.duration.observe(
        { service, method: req.method, route: String(route), status: String(res.statusCode) },
        Number(process.hrtime.bigint() - start) / 1e9,
      );
    });
    next();
  };
}

export const metricsHandler: RequestHandler = async (_req, res) => {
  res.setHeader('Content-Type', client.register.contentType);
  res.send(await client.register.metrics());
};
