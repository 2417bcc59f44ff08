import type { Express } from 'express';
import { z } from 'zod';

/**
 * A face's OpenAPI 3.1 document, built from the zod schemas its routes validate with and answer
 * by (z.toJSONSchema: OpenAPI 3.1 schemas are JSON Schema 2020-12), so the document has no
 * hand-written copy of any body. The operations say which schema is which; this file writes them
 * into the document's shape.
 */

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The credentials a route reads; the document's securitySchemes. */
export const SECURITY_SCHEMES = {
  apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key (svc_…).' },
  bearerApiKey: { type: 'http', scheme: 'bearer', description: 'An API key (svc_…) as a bearer token.' },
  accountToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The account token of /auth/signup or /auth/login.' },
  sharedSecret: { type: 'http', scheme: 'bearer', description: "The operators' shared secret (WEBHOOK_SECRET)." },
  webhookSignature: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Signature',
    description: 'Hex HMAC-SHA256 of the raw body with PAYMENT_WEBHOOK_SECRET.',
  },
} as const;

export type SecurityName = keyof typeof SECURITY_SCHEMES;

export interface ApiResponse {
  description: string;
  /** The body's schema; none for an empty answer (204). */
  schema?: z.ZodType;
  /** Default application/json. */
  contentType?: string;
  /** Further content types of the same answer (an SSE stream beside JSON, markdown beside html). */
  alternatives?: Record<string, z.ZodType>;
  /** Response headers the answer carries, by name. */
  headers?: readonly string[];
}

export interface ApiOperation {
  method: HttpMethod;
  /** The Express path (`/api/rag/index/:jobId`). */
  path: string;
  summary: string;
  description?: string;
  tags?: readonly string[];
  /** Any one of these opens the route; none: open. */
  security?: readonly SecurityName[];
  body?: { schema: z.ZodType; contentType?: string; required?: boolean };
  params?: z.ZodObject;
  query?: z.ZodObject;
  responses: Readonly<Record<number, ApiResponse>>;
}

export interface ApiFace {
  /** The service's name, as /health answers it (accounts, keys, keys-admin, webhooks, rag, mcp). */
  name: string;
  title: string;
  description: string;
  version: string;
  /** The body of every error this face answers ({error, code}; the vision RAG face adds success: false). */
  errorSchema: z.ZodType;
  operations: readonly ApiOperation[];
}

/** A route served before Express (the lean /validate): Express never sees it, the document must. */
export interface RouteRef {
  method: HttpMethod;
  path: string;
}

const HEADER_DESCRIPTIONS: Record<string, string> = {
  'Retry-After': 'Seconds to wait before retrying.',
  'X-RateLimit-Limit': "Requests the key may make in the current minute's window.",
  'X-RateLimit-Remaining': 'Requests left in the window.',
  'X-RateLimit-Reset': 'When the window resets (Unix seconds).',
  'WWW-Authenticate': 'The credentials the route asks for.',
  'Cache-Control': 'no-store on answers that carry a credential; private on a customer’s own images and reports.',
  Allow: 'The methods the path serves.',
};

type JsonSchema = Record<string, unknown>;

/** A zod schema as an OpenAPI 3.1 schema object: the request side (`input`) or the answer's (`output`). */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  // A transform's result has no JSON form; its input side is what the caller sends.
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

/** `/api/rag/index/:jobId` → `/api/rag/index/{jobId}`. */
export const openApiPath = (expressPath: string): string => expressPath.replace(/:(\w+)/g, '{$1}');

export interface OpenApiDocument {
  openapi: '3.1.1';
  info: { title: string; version: string; description: string };
  paths: Record<string, Record<string, unknown>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown>; parameters: Record<string, unknown> };
  [key: string]: unknown;
}

export function openApiDocument(face: ApiFace): OpenApiDocument {
  const paths: Record<string, Record<string, unknown>> = {};
  const used = new Set<SecurityName>();
  for (const op of face.operations) {
    const path = openApiPath(op.path);
    paths[path] ??= {};
    if (paths[path][op.method]) throw new Error(`${op.method.toUpperCase()} ${op.path} is described twice in the ${face.name} document`);
    for (const s of op.security ?? []) used.add(s);
    paths[path][op.method] = operationObject(face, op, (schema) =>
      schema === face.errorSchema ? ERROR_REF : jsonSchemaOf(schema, 'output'),
    );
  }
  const securitySchemes: Record<string, unknown> = {};
  for (const name of Object.keys(SECURITY_SCHEMES) as SecurityName[]) if (used.has(name)) securitySchemes[name] = SECURITY_SCHEMES[name];
  return {
    openapi: '3.1.1',
    info: { title: face.title, version: face.version, description: face.description },
    paths,
    components: {
      securitySchemes,
      // Written once: every operation's errors are this shape.
      schemas: { Error: jsonSchemaOf(face.errorSchema, 'output') },
      parameters: {
        RequestId: {
          name: 'X-Request-Id',
          in: 'header',
          required: false,
          description: 'A request id to use (else one is made); every answer carries it.',
          schema: { type: 'string' },
        },
      },
    },
  };
}

const ERROR_REF = { $ref: '#/components/schemas/Error' };

type SchemaOf = (schema: z.ZodType) => JsonSchema;

function operationObject(face: ApiFace, op: ApiOperation, schemaOf: SchemaOf): Record<string, unknown> {
  const parameters = [
    ...parametersOf(op.params, 'path'),
    ...parametersOf(op.query, 'query'),
    { $ref: '#/components/parameters/RequestId' },
  ];
  const responses: Record<string, unknown> = {};
  for (const [status, answer] of Object.entries(op.responses)) responses[status] = responseObject(answer, schemaOf);
  // Every face answers a dependency outage 503 and anything unexpected 500, in its error shape.
  responses.default ??= responseObject({ description: 'An error ({error, code}).', schema: face.errorSchema }, schemaOf);
  return {
    operationId: operationId(op),
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    ...(op.tags ? { tags: [...op.tags] } : {}),
    ...(op.security ? { security: op.security.map((s) => ({ [s]: [] })) } : {}),
    parameters,
    ...(op.body
      ? {
          requestBody: {
            required: op.body.required ?? true,
            content: { [op.body.contentType ?? 'application/json']: { schema: jsonSchemaOf(op.body.schema, 'input') } },
          },
        }
      : {}),
    responses,
  };
}

function responseObject(answer: ApiResponse, schemaOf: SchemaOf): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  if (answer.schema) content[answer.contentType ?? 'application/json'] = { schema: schemaOf(answer.schema) };
  for (const [type, schema] of Object.entries(answer.alternatives ?? {})) content[type] = { schema: schemaOf(schema) };
  const headers = Object.fromEntries(
    (answer.headers ?? []).map((h) => [h, { description: HEADER_DESCRIPTIONS[h] ?? h, schema: { type: 'string' } }]),
  );
  return {
    description: answer.description,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    ...(Object.keys(content).length > 0 ? { content } : {}),
  };
}

function parametersOf(schema: z.ZodObject | undefined, where: 'path' | 'query'): Record<string, unknown>[] {
  if (!schema) return [];
  const json = jsonSchemaOf(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, s]) => {
    const { description, ...rest } = s;
    return {
      name,
      in: where,
      required: where === 'path' || (json.required ?? []).includes(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    };
  });
}

/** `POST /api/rag/index/:jobId` → `postApiRagIndexByJobId`: stable, so the generated client's names are. */
function operationId(op: ApiOperation): string {
  const words = op.path
    .split('/')
    .filter(Boolean)
    .map((part) => (part.startsWith(':') ? `By-${part.slice(1)}` : part))
    .join('-')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return op.method + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

/**
 * The routes an app mounts (and the lean routes in front of it) that its document does not
 * describe. A route for every method (app.all) needs its path described.
 */
export function undocumentedRoutes(app: Express, doc: OpenApiDocument, lean: readonly RouteRef[] = []): string[] {
  const missing: string[] = [];
  for (const route of mountedRoutes(app).concat(lean.map((r) => ({ path: r.path, methods: [r.method] })))) {
    const item = doc.paths[openApiPath(route.path)];
    if (route.methods === 'all') {
      if (!item) missing.push(`* ${route.path}`);
      continue;
    }
    for (const m of route.methods) if (!item?.[m]) missing.push(`${m.toUpperCase()} ${route.path}`);
  }
  return missing;
}

interface MountedRoute {
  path: string;
  methods: string[] | 'all';
}

/** The routes on an Express 5 app's router, as mounted (a path per route, its methods). */
export function mountedRoutes(app: Express): MountedRoute[] {
  const routes: MountedRoute[] = [];
  for (const { route } of app.router.stack) {
    if (!route) continue;
    // Express's types give a route one path and no methods; at run time it may hold several paths,
    // and its methods are in `methods`, so both are read as what they may be.
    const declared: unknown = route.path;
    const paths = Array.isArray(declared) ? declared : [declared];
    const marked: [string, unknown][] =
      'methods' in route && typeof route.methods === 'object' && route.methods ? Object.entries(route.methods) : [];
    const methods = marked.filter(([, on]) => Boolean(on)).map(([m]) => m);
    // app.all marks every method Node knows.
    const all = methods.includes('_all') || methods.length > 20;
    for (const path of paths)
      if (typeof path === 'string') routes.push({ path, methods: all ? 'all' : methods.filter((m) => m !== 'head') });
  }
  return routes;
}
