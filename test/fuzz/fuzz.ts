import { startBombSite } from './hostile-content.ts';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { pino } from 'pino';
import { freePort } from '../../deploy/local/processes.ts';
import type { StackEnv } from '../../deploy/local/stack.ts';
import { startServices, type RunningPlatform } from '../../app/cli/run.ts';
import { REDACTED_PATHS, type Logger } from '../../services/platform/logger.ts';
import { SERVICES } from '../../app/registry.ts';
import { eventually, testEnv } from '../support/env.ts';
import { keysMailedTo, mailTo } from '../support/mailpit.ts';
import { endpoints, type Endpoint, type FuzzContext, type RequestDraft } from './endpoints.ts';
import { send, type RawResponse } from './raw-http.ts';

/**
 * The fuzz suite's engine, shared by `npm run fuzz` (test/fuzz/run.ts) and the short seeded run in
 * `npm test` (test/e2e/fuzz-smoke.e2e.spec.ts): every service in this process on free ports, every
 * log line it writes searched, real secrets to look for, then N generated requests per endpoint.
 */

export interface Counts {
  endpoint: string;
  requests: number;
  /** Answers 500-599. */
  serverErrors: number;
  /** Uncaught exceptions and unhandled rejections while this endpoint ran, and faces that stopped answering after it. */
  crashes: number;
  /** Answered after more than SLOW_MS. */
  slow: number;
  /** No complete answer (the connection closed first, or none within the client's time limit). */
  unanswered: number;
  /** A real secret (or any svc_ key) in an answer or a log line. */
  secrets: number;
  statuses: Map<number, number>;
  /** A few failures, each with the request index that reproduces it. */
  examples: string[];
  ms: number;
}

export const SLOW_MS = 1000;
const KEY_PATTERN = /svc_[A-Za-z0-9]{33}/g;

/** What the services' logs see: every line searched as written (nothing else kept). */
class LogWatch {
  current = 'setup';
  readonly bySection = new Map<string, { secrets: number; examples: string[] }>();
  lines = 0;
  #secrets: string[] = [];

  readonly errorLines: string[] = [];
  /** Set by `--show`: every line, masked, as it is written. */
  echo: ((line: string) => void) | undefined;

  watch(secrets: string[]): void {
    this.#secrets = secrets.filter((s) => s.length >= 8);
  }

  write(line: string): void {
    this.lines++;
    this.echo?.(mask(line, this.#secrets).slice(0, 2000));
    const found = findSecrets(line, this.#secrets, new Set(), new Set());
    if (found.length > 0) {
      const section = this.bySection.get(this.current) ?? { secrets: 0, examples: [] };
      section.secrets += found.length;
      if (section.examples.length < 3)
        section.examples.push(`log line holds ${found.join(', ')}: ${mask(line, this.#secrets).slice(0, 600)}`);
      this.bySection.set(this.current, section);
    }
    // Not kept: the broker's own complaints while topics are created, and signed webhooks billing
    // cannot use going to the dead-letter topic as designed.
    if (
      /"level":"(error|fatal)"/.test(line) &&
      !line.includes('"component":"kafkajs"') &&
      !line.includes('"msg":"message dead-lettered"') &&
      this.errorLines.length < 200
    )
      this.errorLines.push(`[${this.current}] ${mask(line, this.#secrets).slice(0, 800)}`);
  }
}

/**
 * Bytes by which a body can hold a key-shaped value in one of the readings of `bodyAsServersRead`
 * (or percent-encoded): only such a body is read every way. Reading a 10 MB body four ways costs the
 * fuzz process (which hosts the services) half a second, which the table would count as slow answers.
 */
const KEY_PREFIX_BYTES = [
  Buffer.from('svc_', 'latin1'),
  Buffer.from('svc%5F', 'latin1'),
  Buffer.from('svc%5f', 'latin1'),
  Buffer.from('svc_', 'utf16le'),
  Buffer.from('svc_', 'utf16le').swap16(),
];

/**
 * Adds to `sent` the key-shaped values a request sends (lower case), as written and URL-decoded. An
 * answer quoting one back ("collection svc_… not found"), or a page listing what the client stored
 * earlier (a collection it named `svc_…`), shows the client what it had, not a key; keys the services
 * issue are never in it.
 */
function rememberKeyShapes(req: RequestDraft, sent: Set<string>): void {
  const body = KEY_PREFIX_BYTES.some((prefix) => req.body.includes(prefix)) ? bodyAsServersRead(req.body) : '';
  const text = `${req.target}\n${req.headers.map(([k, v]) => `${k}: ${v}`).join('\n')}\n${body}`;
  let decoded = text;
  try {
    decoded = decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    // a malformed escape: the raw text is what there is
  }
  for (const t of [text, decoded]) for (const m of t.matchAll(KEY_PATTERN)) sent.add(m[0].toLowerCase());
}

/**
 * Names of the secrets in `text` (by kind, never the value), minus what an answer legitimately
 * issues. Real secrets are matched wherever they are; a key-shaped value counts unless `excused`
 * holds it in lower case (the services normalise some fields: an address is lower-cased).
 */
function findSecrets(text: string, secrets: readonly string[], issued: ReadonlySet<string>, excused: ReadonlySet<string>): string[] {
  let t = text;
  for (const value of issued) t = t.replaceAll(value, '');
  const found: string[] = [];
  for (const s of secrets) if (t.includes(s)) found.push(`secret#${secrets.indexOf(s)}`);
  for (const m of t.matchAll(KEY_PATTERN)) {
    if (!secrets.includes(m[0]) && !excused.has(m[0].toLowerCase())) found.push('an API key');
  }
  return found;
}

/**
 * The body as the request sent it, in every reading a server may give it: its bytes, and the text
 * they are in UTF-16 either way round (a `charset=utf-16` body is decoded so, and a key-shaped id
 * in it is then echoed back contiguous, as JSON-RPC errors do).
 */
function bodyAsServersRead(body: Buffer): string {
  const readings = [body.toString('latin1')];
  // From either byte: a BOM or a stray byte first shifts where the code units start.
  for (const start of [0, 1]) {
    const units = body.subarray(start, start + ((body.length - start) & ~1));
    readings.push(units.toString('utf16le'), Buffer.from(units).swap16().toString('utf16le'));
  }
  return readings.join('\n');
}

function mask(text: string, secrets: readonly string[]): string {
  let t = text;
  for (const s of secrets) t = t.replaceAll(s, '[SECRET]');
  return t.replace(KEY_PATTERN, 'svc_[KEY]');
}

export interface FuzzTarget {
  platform: RunningPlatform;
  ctx: FuzzContext;
  logs: LogWatch;
  secrets: string[];
  stop(): Promise<void>;
}

/** A logger like the services' own (same redaction), writing into the watch instead of stdout. */
function watchedLogger(watch: LogWatch, level: string): Logger {
  return pino(
    {
      level,
      base: { system: 'svc' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    { write: (line: string) => watch.write(line) },
  );
}

async function call(
  port: number,
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON
  }
  return { status: res.status, json };
}

/**
 * Every service of the platform in this process (as `svc start` runs them), on free ports, with a
 * database, topics and secrets of its own; then the real things to look for: an account with its
 * password and token, and a team key per keyed endpoint minted with the shared secret.
 */
export async function startTarget(
  stack: StackEnv,
  dir: string,
  options: { logLevel?: string; endpointNames: string[] },
): Promise<FuzzTarget> {
  const ports = {
    accounts: await freePort(),
    keys: await freePort(),
    webhooks: await freePort(),
    rag: await freePort(),
    mcp: await freePort(),
    console: await freePort(),
  };
  const workspace = join(dir, 'workspace');
  const project = join(workspace, 'shop');
  mkdirSync(join(project, 'src'), { recursive: true });
  writeFileSync(
    join(project, 'src', 'cart.ts'),
    'export function addToCart(cart: { items: string[] }, item: string): number {\n  cart.items.push(item);\n  return cart.items.length;\n}\n\nexport const formatPrice = (cents: number): string => `$${(cents / 100).toFixed(2)}`;\n',
  );
  const bombs = await startBombSite();
  const secrets = {
    jwt: randomBytes(32).toString('hex'),
    shared: randomBytes(32).toString('hex'),
    payment: randomBytes(24).toString('hex'),
    kek: randomBytes(32).toString('hex'),
    console: randomBytes(32).toString('hex'),
  };
  const env = testEnv(stack, {
    ACCOUNTS_PORT: String(ports.accounts),
    KEYS_PORT: String(ports.keys),
    WEBHOOKS_PORT: String(ports.webhooks),
    RAG_PORT: String(ports.rag),
    MCP_PORT: String(ports.mcp),
    CONSOLE_PORT: String(ports.console),
    CONSOLE_SECRET: secrets.console,
    AUTH_URL: `http://127.0.0.1:${ports.keys}`,
    JWT_SECRET: secrets.jwt,
    WEBHOOK_SECRET: secrets.shared,
    PAYMENT_WEBHOOK_SECRET: secrets.payment,
    KEY_ENCRYPTION_KEY: secrets.kek,
    PAYMENT_VARIANT_TIERS: '1:pro',
    RAG_ROOTS: workspace,
    // One fixture folder for every endpoint's customer; the per-customer layout has its own e2e spec.
    RAG_ROOTS_LAYOUT: 'shared',
    CAPTURE_ALLOWED_HOSTS: bombs.host,
    RAG_DATA_DIR: join(dir, 'rag'),
    RAG_PUSH_MAX_FILES: '20',
    RAG_MAX_FILE_BYTES: '20000',
    SHUTDOWN_GRACE_MS: '10000',
  });
  const watch = new LogWatch();
  const newAccount = (label: string) => ({
    email: `fuzz-${label}-${randomUUID()}@example.test`,
    password: `fuzz-pw-${randomBytes(12).toString('hex')}`,
    token: '',
    userId: '',
  });
  const account = newAccount('owner');
  const member = newAccount('member');
  const leaving = newAccount('logout');
  // Its address verified by the routes the fuzz sends (POST /auth/verify and the console's /verify).
  const unverified = { ...newAccount('unverified'), verifyToken: '' };
  // One account per route that ends sessions: the first real request revokes its token, the rest are refused.
  const enders = Object.fromEntries(SESSION_ENDING.map((name) => [name, newAccount('ends')]));
  // Watched from the first line: the set-up's own logs count too.
  watch.watch([
    secrets.jwt,
    secrets.shared,
    secrets.payment,
    secrets.kek,
    secrets.console,
    account.password,
    member.password,
    leaving.password,
    unverified.password,
    ...Object.values(enders).map((a) => a.password),
  ]);
  let platform: RunningPlatform;
  try {
    platform = await startServices(SERVICES, env, watchedLogger(watch, options.logLevel ?? 'info'));
  } catch (err) {
    // The bomb site is a listening server: left open, it would keep the test run alive after its end.
    await bombs.stop();
    throw err;
  }
  try {
    for (const a of [account, member, leaving, unverified, ...Object.values(enders)]) {
      const signup = await call(ports.accounts, 'POST', '/auth/signup', { email: a.email, password: a.password, name: 'Fuzz' });
      if (signup.status !== 201) throw new Error(`set-up: sign-up answered ${signup.status}`);
      a.token = String(signup.json.token);
      a.userId = String((signup.json.user as { id?: unknown } | undefined)?.id);
    }
    // Owning a subscription by e-mail, and joining a team by it, need the address verified (where that exists).
    const verifyTokens: string[] = [];
    for (const a of [account, member]) {
      const token = await verifyAddress(ports.accounts, stack.MAILPIT_URL, a);
      if (token) verifyTokens.push(token);
    }
    unverified.verifyToken = (await welcomeVerifyToken(ports.accounts, stack.MAILPIT_URL, unverified)) ?? '';
    const linkTickets = await linkTicketOf(ports.accounts, account.token);
    const keys: FuzzContext['keys'] = {};
    const mint = async (label: string, emailAddress = `fuzz-${randomUUID()}@example.test`) => {
      const subscriptionId = `fuzz-sub-${randomUUID()}`;
      const res = await call(
        ports.keys,
        'POST',
        '/generate',
        { customerId: `fuzz-${label}`, email: emailAddress, tier: 'team', subscriptionId },
        { authorization: `Bearer ${secrets.shared}` },
      );
      if (res.status !== 201) throw new Error(`set-up: minting a key for ${label} answered ${res.status}`);
      return { apiKey: String(res.json.apiKey), subscriptionId };
    };
    for (const name of options.endpointNames) keys[name] = await mint(name);
    // Rotated with the key or with the account's session: a subscription of the account's e-mail.
    keys['POST /keys/rotate'] = await mint('rotate', account.email);
    const revocable = (await mint('revocable')).subscriptionId;
    // The console's own keys (its rotate form has one of its own: a rotation ends the key it rotates).
    keys.console = await mint('console', account.email);
    keys['console rotate'] = await mint('console rotate', account.email);
    const team = await teamOf(ports.keys, stack.MAILPIT_URL, keys['POST /keys/rotate'].subscriptionId, account, member);
    const ragKey = { 'x-api-key': keys['POST /api/rag/setup']!.apiKey };
    const setup = await call(
      ports.rag,
      'POST',
      '/api/rag/setup',
      { projectPath: join(workspace, 'shop'), collectionName: 'fuzz-shop' },
      ragKey,
    );
    if (setup.status !== 200) throw new Error(`set-up: collection answered ${setup.status} ${JSON.stringify(setup.json)}`);
    const index = await call(ports.rag, 'POST', '/api/rag/index', { collectionName: 'fuzz-shop', wait: true }, ragKey);
    if (index.status !== 200) throw new Error(`set-up: indexing answered ${index.status} ${JSON.stringify(index.json)}`);
    const ctx: FuzzContext = {
      ports,
      consoleSecret: secrets.console,
      member,
      leaving,
      unverified,
      linkTickets,
      enders,
      team,
      jwtSecret: secrets.jwt,
      sharedSecret: secrets.shared,
      paymentWebhookSecret: secrets.payment,
      keyEncryptionKey: secrets.kek,
      account,
      keys,
      revocable,
      rotatable: keys['POST /keys/rotate']!.subscriptionId,
      workspace,
      collection: 'fuzz-shop',
      jobId: String(index.json.jobId),
      bombs: { url: bombs.url, paths: bombs.paths },
    };
    const all = [
      secrets.jwt,
      secrets.shared,
      secrets.payment,
      secrets.kek,
      secrets.console,
      account.password,
      account.token,
      member.password,
      member.token,
      leaving.password,
      leaving.token,
      unverified.password,
      unverified.token,
      ...(unverified.verifyToken ? [unverified.verifyToken] : []),
      ...verifyTokens,
      ...Object.values(enders).flatMap((a) => [a.password, a.token]),
      ...team.secrets,
      ...Object.values(keys).map((k) => k.apiKey),
    ];
    watch.watch(all);
    return {
      platform,
      ctx,
      logs: watch,
      secrets: all,
      stop: async () => {
        await platform.runtime.mongo.db.dropDatabase().catch(() => undefined);
        await platform.stop();
        await bombs.stop();
      },
    };
  } catch (err) {
    await platform.stop();
    await bombs.stop();
    throw err;
  }
}

/**
 * The team workspace of `subscriptionId` (a team key of the owner's e-mail) as the team routes make it:
 * the owner invites the member, who joins with the link's token read from the e-mail (the member's
 * key is minted then); a second invitation stays pending, for the withdraw routes. Without a Mailpit
 * to read, the member stays invited only.
 */
async function teamOf(
  keysPort: number,
  mailpitUrl: string,
  subscriptionId: string,
  owner: { token: string },
  member: { email: string; token: string },
): Promise<FuzzContext['team']> {
  const auth = { authorization: `Bearer ${owner.token}` };
  const invite = async (email: string) => {
    const res = await call(keysPort, 'POST', '/team/invitations', { subscriptionId, email, role: 'member' }, auth);
    if (res.status !== 201) throw new Error(`set-up: an invitation answered ${res.status} ${JSON.stringify(res.json)}`);
    return String(res.json.invitationId);
  };
  await invite(member.email);
  const pendingInvitation = await invite(`fuzz-pending-${randomUUID()}@example.test`);
  const secrets: string[] = [];
  if (mailpitUrl) {
    const token = await eventually('the member’s invitation e-mail', async () => {
      const mail = (await mailTo(mailpitUrl, member.email)).map((m) => /[?&]token=([A-Za-z0-9_-]{43})/.exec(m.Text)?.[1]);
      return mail.find((t) => t !== undefined);
    });
    secrets.push(token);
    // The invitation e-mail can arrive before the keys service's workspaces projection holds the
    // invitation: until then accepting answers 404.
    const joined = await eventually('the invitation accepted', async () => {
      const res = await call(keysPort, 'POST', '/team/invitations/accept', { token }, { authorization: `Bearer ${member.token}` });
      return res.status === 404 ? undefined : res;
    });
    if (joined.status !== 200) throw new Error(`set-up: joining the team answered ${joined.status}`);
    // The member's own key goes by e-mail: a secret like any other key.
    const key = await eventually('the member’s key e-mail', async () => (await keysMailedTo(mailpitUrl, member.email))[0]);
    secrets.push(key);
  }
  return { subscriptionId, pendingInvitation, secrets };
}

/**
 * The verification token of the account's welcome e-mail, read from Mailpit; undefined where the
 * accounts service verifies no address (no POST /auth/verify) or there is no Mailpit to read.
 */
async function welcomeVerifyToken(
  accountsPort: number,
  mailpitUrl: string,
  a: { email: string; token: string },
): Promise<string | undefined> {
  const probe = await call(accountsPort, 'POST', '/auth/verify', {}, { authorization: `Bearer ${a.token}` });
  if (probe.status === 404 || !mailpitUrl) return undefined;
  return eventually(`the welcome e-mail to ${a.email}`, async () => {
    const welcome = (await mailTo(mailpitUrl, a.email)).filter((m) => m.Subject.startsWith('Welcome'));
    return welcome.map((m) => /[?&]token=([A-Za-z0-9_-]{43})/.exec(m.Text)?.[1]).find((t) => t !== undefined);
  });
}

/** Verifies the account's address as its owner does (the welcome e-mail's link, with the session); the token used. */
async function verifyAddress(accountsPort: number, mailpitUrl: string, a: { email: string; token: string }): Promise<string | undefined> {
  const token = await welcomeVerifyToken(accountsPort, mailpitUrl, a);
  if (!token) return undefined;
  const res = await call(accountsPort, 'POST', '/auth/verify', { token }, { authorization: `Bearer ${a.token}` });
  if (res.status !== 200) throw new Error(`set-up: verifying ${a.email} answered ${res.status} ${JSON.stringify(res.json)}`);
  return token;
}

/** A ticket of POST /auth/sso/link/start for the account (from the start URL it answers), where linking exists. */
async function linkTicketOf(accountsPort: number, token: string): Promise<string[]> {
  const res = await call(accountsPort, 'POST', '/auth/sso/link/start', { binding: 'b'.repeat(43) }, { authorization: `Bearer ${token}` });
  if (res.status === 404) return [];
  const ticket = typeof res.json.location === 'string' ? new URL(res.json.location).searchParams.get('link') : null;
  if (res.status !== 200 || !ticket) throw new Error(`set-up: starting a link answered ${res.status}`);
  return [ticket];
}

/** Endpoints that end the session they are called with (their names): each gets an account of its own. */
export const SESSION_ENDING = [
  'POST /auth/logout',
  'POST /auth/logout-all',
  'POST /logout (console)',
  'POST /account/logout-all (console)',
];

/** Endpoints that take a key of their own (their names), before the context exists. */
export const KEYED_ENDPOINTS = [
  'POST /validate',
  'GET /audit',
  'GET /api/glm/runs',
  'GET /api/rag/collections',
  'DELETE /api/glm/screenshots/:id',
  'DELETE /api/glm/diffs/:id',
  'DELETE /api/rag/collections/:name',
  'POST /api/memory/notes',
  'GET /api/memory/notes',
  'POST /api/memory/search',
  'GET /usage',
  'POST /reserve',
  'POST /release',
  'POST /keys/limits',
  'POST /api/rag/setup',
  'POST /api/rag/index',
  'GET /api/rag/index/:jobId',
  'POST /api/rag/query',
  'POST /api/glm/capture',
  'POST /api/glm/analyze',
  'POST /api/glm/test',
  'POST /api/glm/baselines/:suite/accept',
  'GET /api/glm/screenshots/:id',
  'GET /api/glm/diffs/:id',
  'GET /api/glm/runs/:runId',
  'GET /api/glm/runs/:runId/report',
  'POST /api/glm/runs/:runId/snapshots/:snapshot/:decision',
  'POST /api/integration/validate',
  'POST /api/integration/generate',
  'POST /api/integration/report',
  'POST /mcp',
];

/** Requests of one endpoint are generated in batches; each batch has a seed of its own, derived from the run's. */
export const BATCH = 64;

export function batchSeed(seed: number, endpoint: string, batch: number): number {
  return createHash('sha256').update(`${seed}:${endpoint}:${batch}`).digest().readInt32LE(0);
}

/** Request `index` of `endpoint` under `seed`, as the run generated it. */
export function requestAt(endpoint: Endpoint, seed: number, index: number): RequestDraft {
  const batch = Math.floor(index / BATCH);
  return fc.sample(endpoint.arb, { seed: batchSeed(seed, endpoint.name, batch), numRuns: BATCH })[index % BATCH]!;
}

export function describeRequest(req: RequestDraft, max = 1500): string {
  const head = [
    `${req.method} ${req.target.slice(0, 200)} ${req.version}`,
    ...req.headers.map(([k, v]) => `${k}: ${v.slice(0, 200)}${v.length > 200 ? `…(${v.length})` : ''}`),
  ];
  const body = req.body.toString('utf8');
  return `${head.join('\n')}\n[framing ${req.framing}, body ${req.bodyKind}, ${req.body.length} bytes]\n${body.slice(0, max)}${body.length > max ? '…' : ''}`;
}

export interface RunOptions {
  runs: number;
  seed: number;
  concurrency: number;
  /** Only endpoints whose name includes one of these. */
  only?: string[];
  progress?: (line: string) => void;
}

async function liveFaces(ctx: FuzzContext): Promise<string[]> {
  const dead: string[] = [];
  for (const [service, port] of Object.entries(ctx.ports)) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health/live`, { signal: AbortSignal.timeout(5000) });
      if (res.status !== 200) dead.push(`${service} /health/live answered ${res.status}`);
    } catch (err) {
      dead.push(`${service} /health/live: ${(err as Error).message}`);
    }
  }
  return dead;
}

/** Sends `runs` requests to every endpoint, `concurrency` at a time, and counts. */
export async function fuzz(target: FuzzTarget, options: RunOptions): Promise<Counts[]> {
  const all = endpoints(target.ctx).filter((e) => !options.only || options.only.some((o) => e.name.includes(o)));
  const results: Counts[] = [];
  const crashes: string[] = [];
  const onCrash = (kind: string) => (err: unknown) =>
    crashes.push(`${kind}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`.slice(0, 1500));
  const onException = onCrash('uncaught exception');
  const onRejection = onCrash('unhandled rejection');
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  const sent = new Set<string>();
  try {
    for (const endpoint of all) {
      target.logs.current = endpoint.name;
      const counts: Counts = {
        endpoint: endpoint.name,
        requests: 0,
        serverErrors: 0,
        crashes: 0,
        slow: 0,
        unanswered: 0,
        secrets: 0,
        statuses: new Map(),
        examples: [],
        ms: 0,
      };
      const started = performance.now();
      const crashesBefore = crashes.length;
      const port = target.ctx.ports[endpoint.service];
      for (let batch = 0; batch * BATCH < options.runs; batch++) {
        const drafts = fc
          .sample(endpoint.arb, { seed: batchSeed(options.seed, endpoint.name, batch), numRuns: BATCH })
          .slice(0, options.runs - batch * BATCH);
        let next = 0;
        const worker = async () => {
          while (next < drafts.length) {
            const i = next++;
            const index = batch * BATCH + i;
            rememberKeyShapes(drafts[i]!, sent);
            const res = await send(port, drafts[i]!);
            record(counts, endpoint, target.secrets, sent, drafts[i]!, res, index);
          }
        };
        await Promise.all(Array.from({ length: Math.min(options.concurrency, endpoint.inFlight ?? Infinity, drafts.length) }, worker));
        if (options.progress && (batch + 1) % 16 === 0) options.progress(`  ${endpoint.name}: ${counts.requests} requests`);
      }
      const dead = await liveFaces(target.ctx);
      counts.crashes += crashes.length - crashesBefore + dead.length;
      for (const c of crashes.slice(crashesBefore, crashesBefore + 3)) counts.examples.push(c);
      for (const d of dead) counts.examples.push(`after this endpoint: ${d}`);
      const logged = target.logs.bySection.get(endpoint.name);
      if (logged) {
        counts.secrets += logged.secrets;
        counts.examples.push(...logged.examples);
      }
      counts.ms = performance.now() - started;
      results.push(counts);
      options.progress?.(
        `${endpoint.name}: ${counts.requests} requests in ${(counts.ms / 1000).toFixed(1)} s; statuses ${[...counts.statuses]
          .sort((a, b) => a[0] - b[0])
          .map(([s, n]) => `${s}:${n}`)
          .join(' ')}`,
      );
    }
    target.logs.current = 'after';
    const setup = target.logs.bySection.get('setup');
    if (setup)
      results.push({
        endpoint: '(set-up)',
        requests: 0,
        serverErrors: 0,
        crashes: 0,
        slow: 0,
        unanswered: 0,
        secrets: setup.secrets,
        statuses: new Map(),
        examples: setup.examples,
        ms: 0,
      });
  } finally {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  }
  return results;
}

/** `sent`: the key-shaped values the run's requests sent so far (rememberKeyShapes). */
function record(
  counts: Counts,
  endpoint: Endpoint,
  secrets: readonly string[],
  sent: ReadonlySet<string>,
  req: RequestDraft,
  res: RawResponse,
  index: number,
): void {
  counts.requests++;
  counts.statuses.set(res.status, (counts.statuses.get(res.status) ?? 0) + 1);
  const problems: string[] = [];
  if (res.status >= 500 && !endpoint.designed?.(res.status, res.body)) {
    counts.serverErrors++;
    problems.push(`answered ${res.status}: ${res.body.toString('utf8').slice(0, 300)}`);
  }
  if (res.ms > SLOW_MS) {
    counts.slow++;
    problems.push(`took ${Math.round(res.ms)} ms (status ${res.status})`);
  }
  // A request the client itself cut short (a Content-Length longer than what it sent) may go unanswered.
  if (res.unanswered && req.framing !== 'long') {
    counts.unanswered++;
    problems.push(`unanswered after ${Math.round(res.ms)} ms${res.text ? `; got ${JSON.stringify(res.text.slice(0, 200))}` : ''}`);
  }
  const issued = new Set(endpoint.issues?.(res.status, res.body) ?? []);
  const found = findSecrets(res.text, secrets, issued, sent);
  if (found.length > 0) {
    counts.secrets += found.length;
    problems.push(`answer holds ${found.join(', ')}: ${mask(res.text, secrets).slice(0, 400)}`);
  }
  if (problems.length > 0 && counts.examples.length < 5) counts.examples.push(`request ${index}: ${problems.join('; ')}`);
}

export const failed = (c: Counts): boolean => c.serverErrors + c.crashes + c.slow + c.unanswered + c.secrets > 0;

export function table(results: readonly Counts[]): string {
  const width = Math.max(8, ...results.map((r) => r.endpoint.length));
  const cols = ['requests', '5xx', 'crashes', '> 1 s', 'unanswered', 'secrets seen'] as const;
  const row = (name: string, values: (string | number)[]) =>
    `| ${name.padEnd(width)} | ${values.map((v, i) => String(v).padStart(cols[i]!.length)).join(' | ')} |`;
  const lines = [row('endpoint', [...cols]), `|${'-'.repeat(width + 2)}|${cols.map((c) => '-'.repeat(c.length + 2)).join('|')}|`];
  for (const r of results) lines.push(row(r.endpoint, [r.requests, r.serverErrors, r.crashes, r.slow, r.unanswered, r.secrets]));
  const sum = (f: (c: Counts) => number) => results.reduce((n, c) => n + f(c), 0);
  lines.push(
    row('total', [
      sum((c) => c.requests),
      sum((c) => c.serverErrors),
      sum((c) => c.crashes),
      sum((c) => c.slow),
      sum((c) => c.unanswered),
      sum((c) => c.secrets),
    ]),
  );
  return lines.join('\n');
}
