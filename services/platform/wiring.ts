import type { Express } from 'express';
import { ConsumerRunner, type EventHandler } from '../../events/consumer.ts';
import { ProjectionApplier, ensureIndexes, projectionGroupId, type Projection } from '../../events/projection.ts';
import type { Document } from 'mongodb';
import { mountApiDocs } from './http/api-docs.ts';
import { createApp, type AppOptions } from './http/app.ts';
import { faceDocument } from './http/face-document.ts';
import type { LeanHandler } from './http/lean-handler.ts';
import { type ApiFace, type RouteRef, undocumentedRoutes } from './http/openapi.ts';
import type { Logger } from './logger.ts';
import type { Runtime } from './runtime.ts';
import { listen } from './service.ts';

/** A started consumer group in the runtime's namespace, reading the topics of the given event types. */
export async function startConsumer(
  rt: Runtime,
  log: Logger,
  options: { group: string; eventTypes: readonly string[]; handler: EventHandler; partitionsAtOnce?: number; commitIntervalMs?: number },
): Promise<ConsumerRunner> {
  const runner = new ConsumerRunner({
    kafka: rt.kafka,
    codec: rt.codec,
    publisher: rt.publisher,
    log,
    groupId: rt.groupId(options.group),
    topics: rt.catalog.topicsOf(options.eventTypes),
    handler: options.handler,
    retries: rt.config.kafka.handlerRetries,
    sessionTimeoutMs: rt.config.kafka.sessionTimeoutMs,
    ...(options.partitionsAtOnce ? { partitionsAtOnce: options.partitionsAtOnce } : {}),
    ...((options.commitIntervalMs ?? rt.config.kafka.commitIntervalMs) !== undefined
      ? { commitIntervalMs: options.commitIntervalMs ?? rt.config.kafka.commitIntervalMs }
      : {}),
  });
  rt.track(runner);
  await runner.start();
  return runner;
}

/**
 * A live projection: its indexes, and a consumer group applying its events. `followed`: caches read
 * its group's committed offsets as how far it has applied (startCacheFeed), so it commits after
 * every chunk.
 */
export async function startProjection(
  rt: Runtime,
  log: Logger,
  projection: Projection<Document>,
  options: { followed?: boolean } = {},
): Promise<ConsumerRunner> {
  await ensureIndexes(rt.mongo.db, projection);
  return startConsumer(rt, log, {
    group: projectionGroupId(projection),
    eventTypes: projection.handles,
    handler: new ProjectionApplier(rt.mongo.db, projection),
    ...(options.followed ? { commitIntervalMs: 0 } : {}),
  });
}

/**
 * A service's HTTP face with the platform's middleware and /health; /metrics only on the process's
 * private listeners (OPS_PORT, ADMIN_PORT), which Prometheus scrapes, never on a public face.
 */
export async function serveHttp(
  rt: Runtime,
  log: Logger,
  options: {
    service: string;
    port: number;
    mount: (app: Express) => void;
    beforeJson?: (app: Express) => void;
    /** The dependencies this face's readiness needs; default all of the runtime's. */
    dependencies?: Runtime['dependencies'];
    errorBody?: AppOptions['errorBody'];
    healthRoute?: AppOptions['healthRoute'];
    /** Routes answered in front of Express (see LeanHandler). */
    lean?: (app: Express) => LeanHandler;
    /** The routes `lean` answers, for the document. */
    leanRoutes?: readonly RouteRef[];
    /**
     * The face's OpenAPI description: served at GET /openapi.json with its page at GET /docs, and
     * checked here against the routes the app mounts, so a face with an undescribed route does not start.
     */
    api?: ApiFace;
  },
) {
  const { ports } = rt.config;
  const metrics = options.port === ports.ops || options.port === ports.admin;
  const doc = options.api ? faceDocument(options.api, { metrics }) : undefined;
  const app = createApp(
    {
      service: options.service,
      log,
      bodyLimit: rt.config.http.bodyLimit,
      health: { ...rt.health, dependencies: options.dependencies ?? rt.dependencies },
      healthDetailsToken: rt.config.secrets.webhookSecret,
      trustProxy: rt.config.http.trustProxy,
      metrics,
      ...(options.beforeJson ? { beforeJson: options.beforeJson } : {}),
      ...(options.errorBody ? { errorBody: options.errorBody } : {}),
      ...(options.healthRoute ? { healthRoute: options.healthRoute } : {}),
    },
    (a) => {
      if (doc) mountApiDocs(a, doc);
      options.mount(a);
    },
  );
  if (doc) {
    const missing = undocumentedRoutes(app, doc, options.leanRoutes);
    if (missing.length > 0) throw new Error(`${options.service}: routes missing from its OpenAPI document: ${missing.join(', ')}`);
  }
  return listen(app, rt.config.http.host, options.port, {
    drainMs: rt.config.shutdownDrainMs,
    traceAs: options.service,
    ...(options.lean ? { lean: options.lean(app) } : {}),
  });
}
