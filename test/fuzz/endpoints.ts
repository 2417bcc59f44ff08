import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { subscriptionPayload } from '../support/lemonsqueezy.ts';
import { json, jsonOf, requestArb, targetArb } from './arbitraries.ts';
import { consoleEndpoints } from './console-endpoints.ts';
import { teamEndpoints } from './team-endpoints.ts';
import { oauthEndpoints } from './oauth-endpoints.ts';
import { hostilePush, rpcBatch } from './hostile-content.ts';
import type { Endpoint, EndpointKit, FuzzContext, Headers } from './endpoint-kit.ts';

export type { Endpoint, EndpointKit, EndpointOptions, FuzzAccount, FuzzContext, Headers, RequestDraft } from './endpoint-kit.ts';

/**
 * Endpoints that hash a password send as many requests at once as there are bcrypt threads
 * (BCRYPT_THREADS, 2): beyond that, answers queue for the hash by design (about 250 ms each on the
 * 2-core machine), and 8 at once take over a second without anything being wrong.
 */
const HASHING = new Set(['POST /auth/signup', 'POST /auth/login', 'POST /auth/password']);

const LIMIT_100KB = 100 * 1024;
const LIMIT_10MB = 10 * 1024 * 1024;

const fakeKey = fc.stringMatching(/^svc_[A-Za-z0-9]{33}$/);
const garbageToken = fc.oneof(
  fc.string({ unit: 'grapheme-ascii', maxLength: 80 }).map((s) => s.replace(/[\r\n]/g, '')),
  fc.constantFrom(
    '',
    ' ',
    'null',
    'undefined',
    'x'.repeat(9000),
    'eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJhZG1pbiJ9.',
    'a.b.c',
    '\u00ff\u00fe',
  ),
);

/** Authorization headers: the real credential often (deeper code runs), else missing, wrong, doubled. */
function authArb(real: Headers[], wrongKinds: fc.Arbitrary<Headers>): fc.Arbitrary<Headers> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...real), weight: 10 },
    { arbitrary: fc.constant<Headers>([]), weight: 3 },
    { arbitrary: wrongKinds, weight: 6 },
    { arbitrary: fc.tuple(fc.constantFrom(...real), wrongKinds).map(([a, b]): Headers => [...a, ...b]), weight: 2 },
    { arbitrary: fc.tuple(wrongKinds, fc.constantFrom(...real)).map(([a, b]): Headers => [...a, ...b]), weight: 2 },
  );
}

const wrongAuth: fc.Arbitrary<Headers> = fc.oneof(
  garbageToken.map((t): Headers => [['Authorization', `Bearer ${t}`]]),
  garbageToken.map((t): Headers => [['Authorization', t]]),
  fc.constantFrom<Headers>(
    [['Authorization', 'Basic YWRtaW46YWRtaW4=']],
    [['Authorization', 'Bearer']],
    [['Authorization', 'bearer  x  y']],
    [['Authorization', '']],
  ),
  fakeKey.map((k): Headers => [['X-API-Key', k]]),
  fakeKey.map((k): Headers => [['Authorization', `Bearer ${k}`]]),
  garbageToken.map((t): Headers => [['X-API-Key', t]]),
);

const keyAuth = (apiKey: string): Headers[] => [[['X-API-Key', apiKey]], [['Authorization', `Bearer ${apiKey}`]], [['x-api-key', apiKey]]];
const bearer = (token: string): Headers[] => [[['Authorization', `Bearer ${token}`]], [['authorization', `bearer ${token}`]]];

const str = (arb: fc.Arbitrary<string>) => jsonOf(arb);
const word = fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 30 });
const email = fc.oneof(
  fc.emailAddress().map((e) => e.slice(0, 200)),
  fc.uuid().map((u) => `fuzz-${u}@example.test`),
);
const collectionName = fc.oneof(fc.stringMatching(/^fz[A-Za-z0-9_.-]{1,20}$/), fc.constantFrom('default', 'a', '-', '.', '..'));
/** Pages the capture guard refuses before any browser opens: loopback, private, metadata, and not-http. */
const blockedUrl = fc.constantFrom(
  'http://127.0.0.1:1/',
  'http://localhost/',
  'http://169.254.169.254/latest/meta-data/',
  'http://[::1]/',
  'http://10.0.0.1/',
  'http://0.0.0.0/',
  'https://192.168.1.1/x?y=1',
  'http://2130706433/',
  'http://0x7f000001/',
  'http://127.1/',
  'http://[::ffff:127.0.0.1]/',
  'http://[fd00::1]/',
  'http://user:pass@127.0.0.1/',
  'ftp://127.0.0.1/',
  'file:///etc/passwd',
  'javascript:alert(1)',
  'http://',
  'https://',
  'http:///x',
);

/** Text-level guard: a request must never hold the connection while a real indexing job runs. */
const noWaiting = (body: Buffer): Buffer => {
  const text = body.toString('latin1');
  return text.includes('"wait":true') ? Buffer.from(text.replaceAll('"wait":true', '"wait":false'), 'latin1') : body;
};

/** A token field in the answer is the one it issues. */
const issuedField =
  (field: string) =>
  (status: number, body: Buffer): string[] => {
    if (status < 200 || status > 299) return [];
    try {
      const value = (JSON.parse(body.toString('utf8')) as Record<string, unknown>)[field];
      return typeof value === 'string' ? [value] : [];
    } catch {
      return [];
    }
  };

export function endpoints(ctx: FuzzContext): Endpoint[] {
  const { ports } = ctx;
  const list: Endpoint[] = [];
  const add: EndpointKit['add'] = (name, service, options, issues) => {
    const [method = 'GET', path = '/'] = name.split(' ');
    const arb = requestArb({
      method,
      path: options.path ?? targetArb(path),
      port: ports[service],
      template: options.template,
      limitBytes: options.limit ?? LIMIT_100KB,
      auth: options.auth ?? fc.oneof({ arbitrary: fc.constant<Headers>([]), weight: 3 }, { arbitrary: wrongAuth, weight: 1 }),
      ...(options.guard ? { guard: options.guard } : {}),
      ...(options.sign ? { sign: options.sign } : {}),
      ...(options.body ? { body: options.body } : {}),
      ...(options.encoding ? { encoding: options.encoding } : {}),
    });
    const inFlight = options.inFlight ?? (HASHING.has(name) ? 2 : undefined);
    list.push({
      name,
      service,
      arb,
      ...(issues ? { issues } : {}),
      ...(inFlight ? { inFlight } : {}),
      ...(options.designed ? { designed: options.designed } : {}),
    });
  };
  const key = (name: string) => ctx.keys[name]!.apiKey;
  const keyAuthFor = (name: string) => authArb(keyAuth(key(name)), wrongAuth);
  const jwtAuth = authArb([...bearer(ctx.account.token)], wrongAuth);
  const sharedAuth = authArb(bearer(ctx.sharedSecret), wrongAuth);
  const kit: EndpointKit = {
    add,
    authArb,
    wrongAuth,
    garbageToken,
    bearer,
    keyAuth,
    keyAuthFor,
    issuedField,
    word,
    email,
    collectionName,
  };

  // accounts
  add(
    'POST /auth/signup',
    'accounts',
    {
      template: {
        email: jsonOf(email),
        password: str(fc.string({ minLength: 8, maxLength: 40 })),
        name: str(fc.oneof(word, fc.constantFrom('Ann', 'Zoë', 'visit evil.example', 'x'.repeat(101)))),
      },
    },
    issuedField('token'),
  );
  add(
    'POST /auth/login',
    'accounts',
    {
      template: {
        email: jsonOf(fc.oneof(fc.constant(ctx.account.email), email, fc.constant(ctx.account.email.toUpperCase()))),
        password: jsonOf(fc.oneof(fc.constant(ctx.account.password), fc.string({ minLength: 1, maxLength: 80 }))),
      },
    },
    issuedField('token'),
  );
  add('GET /auth/me', 'accounts', { template: {}, auth: jwtAuth });
  // Never the real current password: a change would revoke the session the other endpoints use.
  add(
    'POST /auth/password',
    'accounts',
    {
      template: {
        currentPassword: str(fc.string({ minLength: 1, maxLength: 80 })),
        newPassword: str(fc.string({ minLength: 1, maxLength: 80 })),
      },
      auth: jwtAuth,
    },
    issuedField('token'),
  );

  // Log-out with the bearer token alone: each route with an account of its own (its first real call ends that token).
  for (const name of ['POST /auth/logout', 'POST /auth/logout-all']) {
    const ender = ctx.enders[name]!;
    add(name, 'accounts', { template: {}, auth: authArb(bearer(ender.token), wrongAuth) });
  }
  // Verifying an address: the link's token with the account's session (email-verification.routes.ts).
  const unverifiedAuth = authArb([...bearer(ctx.unverified.token), ...bearer(ctx.account.token).slice(0, 1)], wrongAuth);
  add('POST /auth/verify', 'accounts', {
    template: {
      token: jsonOf(
        fc.oneof(
          { arbitrary: fc.constantFrom(ctx.unverified.verifyToken), weight: 2 },
          { arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{43}$/), weight: 2 },
          { arbitrary: word, weight: 1 },
        ),
      ),
    },
    auth: unverifiedAuth,
  });
  add('POST /auth/verify/resend', 'accounts', { template: {}, auth: unverifiedAuth });
  add('POST /billing/checkout', 'accounts', {
    template: { tier: jsonOf(fc.constantFrom('pro', 'team', 'free', 'enterprise', '')) },
    auth: jwtAuth,
    designed: (status, body) => status === 503 && body.includes('"CHECKOUT_NOT_CONFIGURED"'),
  });
  add('GET /pricing', 'accounts', {
    template: {},
    path: fc.constantFrom('/pricing', '/pricing.js', '/pricing.css', '/pricing?tier=team', '/pricing/%ZZ', '/pricing.js?x=%E0%A4%A'),
  });

  // keys
  const metric = jsonOf(fc.constantFrom('queries', 'filesIndexed', 'screenshotsAnalyzed', 'tokens'));
  add('POST /validate', 'keys', {
    template: {
      apiKey: jsonOf(fc.oneof(fc.constant(key('POST /validate')), fakeKey, word)),
      metric,
      amount: jsonOf(fc.integer({ min: -5, max: 20_000 })),
    },
  });
  add('GET /usage', 'keys', { template: {}, auth: keyAuthFor('GET /usage') });
  add('POST /reserve', 'keys', {
    template: {
      apiKey: jsonOf(fc.oneof(fc.constant(key('POST /reserve')), fakeKey)),
      metric,
      amount: jsonOf(fc.integer({ min: -5, max: 20_000 })),
    },
  });
  add('POST /release', 'keys', {
    template: { apiKey: jsonOf(fc.oneof(fc.constant(key('POST /release')), fakeKey)), reservation: jsonOf(fc.oneof(fc.uuid(), word)) },
  });
  add(
    'POST /generate',
    'keys',
    {
      template: {
        customerId: str(fc.oneof(word, fc.uuid())),
        email: jsonOf(email),
        tier: jsonOf(fc.constantFrom('free', 'pro', 'team', 'enterprise', 'TEAM')),
        subscriptionId: str(
          fc.oneof(
            fc.uuid().map((u) => `fz-${u}`),
            word,
          ),
        ),
      },
      auth: sharedAuth,
    },
    issuedField('apiKey'),
  );
  add('POST /revoke', 'keys', {
    template: { subscriptionId: jsonOf(fc.oneof(fc.constant(ctx.revocable), word, fc.uuid())), reason: str(word) },
    auth: sharedAuth,
  });
  add('POST /keys/rotate', 'keys', {
    template: { subscriptionId: jsonOf(fc.oneof(fc.constant(ctx.rotatable), word)) },
    auth: authArb([...keyAuth(key('POST /keys/rotate')), ...bearer(ctx.account.token)], wrongAuth),
  });
  add('POST /keys/limits', 'keys', {
    template: {
      subscriptionId: jsonOf(fc.oneof(fc.constant(ctx.rotatable), word)),
      requestsPerMinute: jsonOf(fc.oneof(fc.integer({ min: -10, max: 7000 }), fc.constant(null), fc.double(), word)),
    },
    auth: authArb([...keyAuth(key('POST /keys/limits')), ...bearer(ctx.account.token)], wrongAuth),
  });
  teamEndpoints(ctx, kit);
  oauthEndpoints(ctx, kit);
  consoleEndpoints(ctx, kit);

  // webhooks: the real signature of the exact bytes often, so the body reaches the log and billing.
  const realWebhook = fc
    .constantFrom('subscription_created', 'subscription_updated', 'subscription_cancelled', 'subscription_payment_success', 'order_created')
    .map((event) => {
      const payload = subscriptionPayload(event, {
        subscriptionId: 990_000_000 + (event.length % 7),
        attributes: { user_email: `fuzz-hook@example.test`, variant_id: 1 },
      });
      return payload;
    });
  const sign = (body: Buffer): Headers => [['X-Signature', createHmac('sha256', ctx.paymentWebhookSecret).update(body).digest('hex')]];
  add('POST /webhooks/payment', 'webhooks', {
    template: {
      meta: realWebhook.map((p) => json(p.meta)),
      data: realWebhook.map((p) => json(p.data)),
    },
    sign: fc.oneof(
      { arbitrary: fc.constant(sign), weight: 8 },
      { arbitrary: fc.constant((): Headers => []), weight: 2 },
      {
        arbitrary: fc
          .constantFrom<Headers>(
            [['X-Signature', '0'.repeat(64)]],
            [['X-Signature', 'zz']],
            [['X-Signature', '']],
            [['X-Signature', 'a'.repeat(10_000)]],
          )
          .map((h) => () => h),
        weight: 2,
      },
      { arbitrary: fc.constant((body: Buffer): Headers => [...sign(body), ['X-Signature', 'f'.repeat(64)]]), weight: 1 },
    ),
  });

  // rag
  add('GET /api', 'rag', { template: {} });
  add('POST /api/rag/setup', 'rag', {
    template: {
      projectPath: jsonOf(
        fc.constantFrom(
          ctx.workspace,
          `${ctx.workspace}/`,
          `${ctx.workspace}/../..`,
          '/',
          '/etc',
          'relative/path',
          `${ctx.workspace}/nope`,
          `${ctx.workspace}\u0000`,
        ),
      ),
      collectionName: jsonOf(collectionName),
      vectorDB: jsonOf(fc.constantFrom('local', 'qdrant', 'weaviate', 'pinecone', 'mongo')),
    },
    auth: keyAuthFor('POST /api/rag/setup'),
  });
  const files = fc.oneof(
    fc.array(
      fc.record({
        path: fc.oneof(fc.constantFrom('src/a.ts', '../../x.ts', '/etc/passwd', '', 'a\u0000b.ts', 'node_modules/x.js'), word),
        content: fc.string({ maxLength: 200 }),
      }),
      { maxLength: 3 },
    ),
    hostilePush,
  );
  add('POST /api/rag/index', 'rag', {
    template: {
      collectionName: jsonOf(fc.oneof(collectionName, fc.constant(ctx.collection))),
      files: jsonOf(files),
      wait: jsonOf(fc.constant(false)),
    },
    auth: keyAuthFor('POST /api/rag/index'),
    limit: LIMIT_10MB,
    guard: noWaiting,
  });
  add('GET /api/rag/index/:jobId', 'rag', {
    template: {},
    auth: keyAuthFor('GET /api/rag/index/:jobId'),
    path: fc.oneof(
      { arbitrary: fc.constant(`/api/rag/index/${ctx.jobId}`), weight: 3 },
      {
        arbitrary: fc
          .oneof(word, fc.uuid(), fc.constantFrom('%E0%A4%A', '%00', '..%2f..%2f', '__proto__', 'constructor', 'x'.repeat(3000), '%ZZ'))
          .map((id) => `/api/rag/index/${encodeURI(id).replace(/%25/g, '%')}`),
        weight: 5,
      },
    ),
  });
  add('POST /api/rag/query', 'rag', {
    template: {
      query: str(fc.oneof(word, fc.constantFrom('where is the cart total computed?', 'addToCart', '(a+)+$', '.*', '\\'))),
      collectionName: jsonOf(fc.oneof(collectionName, fc.constant(ctx.collection))),
      topK: jsonOf(fc.integer({ min: -1, max: 60 })),
    },
    auth: keyAuthFor('POST /api/rag/query'),
  });

  // glm: pages only the guard refuses, so no browser loads anything
  const viewport = jsonOf(fc.record({ width: fc.integer({ min: 0, max: 5000 }), height: fc.integer({ min: 0, max: 5000 }) }));
  add('POST /api/glm/capture', 'rag', {
    template: {
      url: jsonOf(blockedUrl),
      selector: str(fc.constantFrom('#x', 'body', ':has(', 'a'.repeat(1001))),
      fullPage: jsonOf(fc.boolean()),
      viewport,
      waitFor: jsonOf(fc.constantFrom('load', 'networkidle', { selector: '#a' }, 'never')),
    },
    auth: keyAuthFor('POST /api/glm/capture'),
  });
  add('POST /api/glm/analyze', 'rag', {
    template: {
      screenshotId: str(fc.oneof(fc.uuid(), word)),
      screenshotUrl: jsonOf(fc.oneof(blockedUrl, fc.constantFrom(...ctx.bombs.paths.map((p) => `${ctx.bombs.url}${p}`)))),
      url: jsonOf(blockedUrl),
      analysisType: jsonOf(fc.constantFrom('ui-elements', 'layout', 'accessibility', 'visual-bugs', 'comprehensive', 'other')),
      baselineScreenshotId: str(fc.uuid()),
    },
    auth: keyAuthFor('POST /api/glm/analyze'),
  });
  add('POST /api/glm/test', 'rag', {
    template: {
      url: jsonOf(blockedUrl),
      testSuite: jsonOf(
        fc.record({
          name: word,
          checks: fc.array(
            fc.record({
              name: fc.stringMatching(/^[a-z]{1,8}$/),
              type: fc.constantFrom('visual', 'element', 'text', 'accessibility', 'x'),
              selector: fc.constant('#a'),
            }),
            { maxLength: 3 },
          ),
        }),
      ),
    },
    auth: keyAuthFor('POST /api/glm/test'),
  });
  const idPath = (prefix: string, suffix = '') =>
    fc
      .oneof(fc.uuid(), word, fc.constantFrom('%E0%A4%A', '%00', '..%2f..%2fetc%2fpasswd', '__proto__', 'x'.repeat(3000), '%ZZ', ''))
      .map((id) => `${prefix}${encodeURI(id).replace(/%25/g, '%')}${suffix}`);
  add('POST /api/glm/baselines/:suite/accept', 'rag', {
    template: {},
    auth: keyAuthFor('POST /api/glm/baselines/:suite/accept'),
    path: idPath('/api/glm/baselines/', '/accept'),
  });
  add('GET /api/glm/screenshots/:id', 'rag', {
    template: {},
    auth: keyAuthFor('GET /api/glm/screenshots/:id'),
    path: idPath('/api/glm/screenshots/'),
  });
  add('GET /api/glm/diffs/:id', 'rag', { template: {}, auth: keyAuthFor('GET /api/glm/diffs/:id'), path: idPath('/api/glm/diffs/') });
  add('GET /api/glm/runs', 'rag', { template: {}, auth: keyAuthFor('GET /api/glm/runs') });
  add('DELETE /api/glm/screenshots/:id', 'rag', {
    template: {},
    auth: keyAuthFor('DELETE /api/glm/screenshots/:id'),
    path: idPath('/api/glm/screenshots/'),
  });
  add('DELETE /api/glm/diffs/:id', 'rag', { template: {}, auth: keyAuthFor('DELETE /api/glm/diffs/:id'), path: idPath('/api/glm/diffs/') });
  add('GET /api/rag/collections', 'rag', { template: {}, auth: keyAuthFor('GET /api/rag/collections') });
  add('DELETE /api/rag/collections/:name', 'rag', {
    template: {},
    auth: keyAuthFor('DELETE /api/rag/collections/:name'),
    path: idPath('/api/rag/collections/'),
  });
  add('POST /api/memory/notes', 'rag', {
    template: {
      text: str(fc.oneof(word, fc.string({ maxLength: 5000 }))),
      tags: jsonOf(fc.array(fc.oneof(word, fc.constantFrom('billing', 'UPPER', '-x', 'x'.repeat(40))), { maxLength: 10 })),
    },
    auth: keyAuthFor('POST /api/memory/notes'),
  });
  add('GET /api/memory/notes', 'rag', { template: {}, auth: keyAuthFor('GET /api/memory/notes') });
  add('POST /api/memory/search', 'rag', {
    template: { query: str(fc.oneof(word, fc.string({ maxLength: 2500 }))), topK: jsonOf(fc.integer({ min: -2, max: 50 })) },
    auth: keyAuthFor('POST /api/memory/search'),
  });
  add('GET /api/glm/runs/:runId', 'rag', { template: {}, auth: keyAuthFor('GET /api/glm/runs/:runId'), path: idPath('/api/glm/runs/') });
  add('GET /api/glm/runs/:runId/report', 'rag', {
    template: {},
    auth: keyAuthFor('GET /api/glm/runs/:runId/report'),
    path: idPath('/api/glm/runs/', '/report'),
  });
  // A snapshot is check@viewport: the @ and its absence, encoded and not, both sides hostile.
  const snapshot = fc
    .oneof(
      fc.tuple(word, word).map(([c, v]) => `${c}@${v}`),
      word,
      fc.constantFrom('@', 'a@', '@b', 'a%40b', 'a@b@c', '%00@x', 'x'.repeat(600)),
    )
    .map((id) => encodeURI(id).replace(/%25/g, '%'));
  add('POST /api/glm/runs/:runId/snapshots/:snapshot/:decision', 'rag', {
    template: {},
    auth: keyAuthFor('POST /api/glm/runs/:runId/snapshots/:snapshot/:decision'),
    path: fc
      .tuple(idPath('/api/glm/runs/'), snapshot, fc.constantFrom('accept', 'reject', 'ACCEPT', ''))
      .map(([run, snap, decision]) => `${run}/snapshots/${snap}/${decision}`),
  });

  // integration
  const component = str(fc.oneof(word, fc.constantFrom('addToCart', 'CartTotal', 'formatPrice', '<script>', '*')));
  add('POST /api/integration/validate', 'rag', {
    template: {
      component,
      expectedBehavior: str(fc.oneof(word, fc.constantFrom('It adds an item. It returns the new total.', '.'.repeat(4001)))),
      context: str(word),
      collectionName: jsonOf(fc.oneof(collectionName, fc.constant(ctx.collection))),
      url: jsonOf(blockedUrl),
    },
    auth: keyAuthFor('POST /api/integration/validate'),
  });
  add('POST /api/integration/generate', 'rag', {
    template: {
      component,
      testType: jsonOf(fc.constantFrom('unit', 'integration', 'e2e', 'visual', 'fuzz')),
      coverage: jsonOf(fc.constantFrom('basic', 'comprehensive', 'exhaustive', 'total')),
      collectionName: jsonOf(fc.oneof(collectionName, fc.constant(ctx.collection))),
      url: jsonOf(blockedUrl),
      framework: jsonOf(fc.constantFrom('mocha', 'vitest', 'jest', 'node:test', 'playwright', 'ava')),
    },
    auth: keyAuthFor('POST /api/integration/generate'),
  });
  add('POST /api/integration/report', 'rag', {
    template: {
      projectName: str(word),
      collectionName: jsonOf(fc.oneof(collectionName, fc.constant(ctx.collection))),
      includeMetrics: jsonOf(fc.boolean()),
      since: jsonOf(fc.constantFrom('2020-01-01T00:00:00Z', '2026-13-45T99:99:99Z', 'yesterday', '0000-01-01T00:00:00+14:00')),
      format: jsonOf(fc.constantFrom('json', 'markdown', 'html', 'pdf')),
    },
    auth: keyAuthFor('POST /api/integration/report'),
  });

  // mcp: JSON-RPC, single and batched, every tool with arguments near its schema
  const toolArgs = fc.oneof(
    fc.record({
      name: fc.constant('rag_query'),
      arguments: fc.record({
        query: word,
        collectionName: fc.oneof(collectionName, fc.constant(ctx.collection)),
        topK: fc.integer({ min: -1, max: 60 }),
      }),
    }),
    fc.record({
      name: fc.constant('rag_setup'),
      arguments: fc.record({ projectPath: fc.constantFrom(ctx.workspace, '/etc'), collectionName }),
    }),
    fc.record({ name: fc.constant('rag_index'), arguments: fc.record({ collectionName, files: files, wait: fc.constant(false) }) }),
    fc.record({ name: fc.constant('rag_index_status'), arguments: fc.record({ jobId: fc.oneof(fc.constant(ctx.jobId), word) }) }),
    fc.record({
      name: fc.constantFrom('glm_capture', 'glm_analyze', 'glm_test'),
      arguments: fc.record({ url: blockedUrl, analysisType: fc.constantFrom('layout', 'x') }),
    }),
    fc.record({
      name: fc.constantFrom('integration_validate', 'integration_generate', 'integration_report'),
      arguments: fc.record({
        component: word,
        expectedBehavior: word,
        testType: fc.constantFrom('unit', 'e2e'),
        projectName: word,
        url: blockedUrl,
      }),
    }),
    fc.record({ name: fc.constantFrom('health_check', 'api_info', 'nope', '__proto__'), arguments: fc.constant({}) }),
  );
  const batches = rpcBatch(ctx.collection);
  const rpc = fc.record({
    jsonrpc: fc.constantFrom('2.0', '1.0'),
    id: fc.oneof(fc.nat(), word, fc.constant(null)),
    method: fc.constantFrom(
      'initialize',
      'tools/list',
      'tools/call',
      'tools/call',
      'tools/call',
      'ping',
      'notifications/initialized',
      'resources/list',
      'prompts/list',
      'completion/complete',
      'x/y',
    ),
    params: fc.oneof(
      toolArgs,
      fc.constant({ protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } }),
      fc.constant({}),
    ),
  });
  add('POST /mcp', 'mcp', {
    template: {
      jsonrpc: jsonOf(fc.constantFrom('2.0', '1.0')),
      id: jsonOf(fc.oneof(fc.nat(), word)),
      method: rpc.map((r) => json(r.method)),
      params: rpc.map((r) => json(r.params)),
    },
    auth: authArb(keyAuth(key('POST /mcp')), wrongAuth),
    limit: LIMIT_10MB,
    guard: (body) => {
      // A batch: a JSON array of requests, sometimes; now and then a long one of metered calls.
      const text = body.toString('latin1');
      if (text.startsWith('{"jsonrpc"') && text.length % 11 === 0)
        return Buffer.from(JSON.stringify(fc.sample(batches, { numRuns: 1, seed: text.length })[0]), 'latin1');
      return noWaiting(text.startsWith('{"jsonrpc"') && text.length % 5 === 0 ? Buffer.from(`[${text},${text}]`, 'latin1') : body);
    },
  });

  // every face's own routes
  for (const service of ['accounts', 'keys', 'webhooks', 'rag', 'mcp', 'console'] as const) {
    add(`GET /health (${service})`, service, {
      template: {},
      path: fc.oneof(
        { arbitrary: fc.constant('/health'), weight: 6 },
        { arbitrary: fc.constantFrom('/health/live', '/metrics', '/health?x=%zz', '/health/', '/%'), weight: 2 },
      ),
      auth: fc.oneof(fc.constant<Headers>([]), wrongAuth, fc.constant(bearer(ctx.sharedSecret)[0]!)),
    });
    // Each face's API document and its reference page (where the face has one); its 4 MB script rarely,
    // since searching each answer for every secret is the fuzz process's own work.
    add(`GET /openapi.json (${service})`, service, {
      template: {},
      path: fc.oneof(
        {
          arbitrary: fc.constantFrom('/openapi.json', '/openapi.json?x=%zz', '/docs', '/docs/', '/docs/start.js', '/docs/%2e%2e/x'),
          weight: 20,
        },
        { arbitrary: fc.constant('/docs/scalar.js'), weight: 1 },
      ),
    });
  }
  return list;
}
