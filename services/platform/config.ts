import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { parseAllowList, type AllowList } from './allow-list.ts';
import { TIERS, type Tier, isTier } from '../kernel/tiers.ts';
import { parseTrustProxy, type TrustProxy } from './http/trust-proxy.ts';
import { KAFKA_SECURITY_SCHEMA, kafkaSecurity } from './kafka-security.ts';
import { MAX_HEAP_GROWTH_PERCENT } from './heap-growth.ts';
import { TRACING_SCHEMA, tracingSettings, type TracingSettings } from './tracing/config.ts';
import type { KafkaSasl, KafkaTls } from '../../events/kafka.ts';

/**
 * The one place that reads process.env. Every variable is validated at start-up and a bad one
 * fails with its name, so a misconfigured deployment dies at boot instead of at first use.
 */

const hex64 = /^[0-9a-fA-F]{64}$/;

const port = (fallback: number) => z.coerce.number().int().min(1).max(65535).default(fallback);

const url = z.url({ error: 'must be an absolute URL' });

const csvList = z
  .string()
  .transform((s) =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter((x) => x.length > 0),
  )
  .pipe(z.array(z.string()).min(1, { error: 'must name at least one host:port' }));

const variantTiers = z.string().transform((s, ctx) => {
  const map = new Map<string, Tier>();
  for (const pair of s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)) {
    const [variant, tier] = pair.split(':').map((x) => x.trim());
    if (!variant || !tier || !isTier(tier) || tier === 'free') {
      ctx.addIssue({ code: 'custom', message: `"${pair}" is not variantId:pro|team` });
      return z.NEVER;
    }
    map.set(variant, tier);
  }
  return map;
});

/** `pro:20,team:100`: a number per paid tier (free has no vision RAG); tiers left out keep their default. */
const perTier = (defaults: Readonly<Record<Tier, number>>) =>
  z
    .string()
    .transform((s, ctx) => {
      const values: Record<Tier, number> = { ...defaults };
      for (const pair of s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)) {
        const [tier, value] = pair.split(':').map((x) => x.trim());
        const n = Number(value);
        if (!tier || !isTier(tier) || !Number.isInteger(n) || n < 0) {
          ctx.addIssue({ code: 'custom', message: `"${pair}" is not tier:number (tiers ${TIERS.join(', ')})` });
          return z.NEVER;
        }
        values[tier] = n;
      }
      return values;
    })
    .default(defaults);

/** `customerId=/abs/folder,...`: folders an operator gives a customer besides its own under the roots. */
const customerFolders = z
  .string()
  .transform((s, ctx) => {
    const map = new Map<string, string[]>();
    for (const pair of s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean)) {
      const at = pair.lastIndexOf('=');
      const customer = pair.slice(0, Math.max(0, at)).trim();
      const folder = pair.slice(at + 1).trim();
      if (at <= 0 || !folder.startsWith('/')) {
        ctx.addIssue({ code: 'custom', message: `"${pair}" is not customerId=/absolute/folder` });
        return z.NEVER;
      }
      map.set(customer, [...(map.get(customer) ?? []), folder]);
    }
    return map as ReadonlyMap<string, readonly string[]>;
  })
  .default(new Map());

/**
 * Partitions of a topic created in production when KAFKA_TOPIC_PARTITIONS is unset: a consumer group
 * has at most one active member per partition, and the autoscalers go to 10 replicas (keys). Topics
 * that exist keep theirs (raising it: `svc topics repartition`, docs/operations.md). Development and
 * tests keep 3, which a one-broker local Kafka creates fast.
 */
export const PRODUCTION_TOPIC_PARTITIONS = 12;

/**
 * The verification counts' write interval unless VERIFICATION_FLUSH_MS says otherwise. 10 s took about
 * a quarter of the stack's CPU off under bench:validate's load (12 % of a core to 9 %) and moved no
 * latency figure, so /usage keeps counts at most 2 s old (docs/benchmarks.md, 2026-11-30).
 */
export const DEFAULT_VERIFICATION_FLUSH_MS = 2000;

/**
 * How far V8 lets the old generation grow past what survived a full collection, unless
 * HEAP_GROWTH_PERCENT says otherwise. After the memory reducer's collection V8 alone leaves about 10 %,
 * and a serving process then ran full collections every few seconds; a round of bench:validate that
 * held one had a p99 of 18-145 ms. 300 % (four times the survivors) is the largest factor V8 picks by
 * itself; with it a bench run held 4 full collections instead of 12-15 (docs/benchmarks.md, 2026-12-07).
 */
export const DEFAULT_HEAP_GROWTH_PERCENT = 300;

/** Secrets: required in production; in development a throwaway value is generated and reported. */
const secret = (check: (s: string) => string | null) =>
  z
    .string()
    .optional()
    .superRefine((value, ctx) => {
      if (value === undefined) return;
      const problem = check(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });

const atLeast32Bytes = (s: string) => (Buffer.byteLength(s) >= 32 ? null : 'must be at least 32 bytes');
const sixtyFourHex = (s: string) => (hex64.test(s) ? null : 'must be 64 hexadecimal characters (32 random bytes)');

const schema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  KAFKA_BROKERS: csvList.optional(),
  KAFKA_CLIENT_ID: z.string().min(1).default('svc'),
  KAFKA_TOPIC_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9._-]{0,100}$/, { error: 'may hold only letters, digits, ".", "_" and "-"' })
    .default(''),
  KAFKA_TOPIC_PARTITIONS: z.coerce.number().int().min(1).max(1000).optional(),
  KAFKA_REPLICATION_FACTOR: z.coerce.number().int().min(1).max(7).default(1),
  KAFKA_PUBLISH_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(5000),
  KAFKA_HANDLER_RETRIES: z.coerce.number().int().min(0).max(100).default(3),
  KAFKA_SESSION_TIMEOUT_MS: z.coerce.number().int().min(6000).max(300_000).default(30_000),
  KAFKA_COMMIT_INTERVAL_MS: z.coerce.number().int().min(0).max(60_000).optional(),
  ...KAFKA_SECURITY_SCHEMA,
  SCHEMA_REGISTRY_URL: url.optional(),
  SCHEMA_REGISTRY_USERNAME: z.string().min(1).max(500).optional(),
  SCHEMA_REGISTRY_PASSWORD: z.string().min(1).max(500).optional(),
  SCHEMA_REGISTER_AT_START: z.enum(['true', 'false'], { error: 'must be true or false' }).default('false'),
  EFFECT_LEASE_MS: z.coerce.number().int().min(1000).max(3_600_000).default(30_000),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(1000).max(600_000).default(10_000),
  SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(120_000).default(0),
  SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(100).max(600_000).optional(),
  HEAP_GROWTH_PERCENT: z.coerce.number().int().min(0).max(MAX_HEAP_GROWTH_PERCENT).default(DEFAULT_HEAP_GROWTH_PERCENT),

  MONGODB_URI: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\//, { error: 'must be a mongodb:// or mongodb+srv:// URI' })
    .optional(),
  MONGODB_DB: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,63}$/, { error: 'must be a plain database name' })
    .default('svc'),

  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, { error: 'must be an smtp:// or smtps:// URL' })
    .optional(),
  MAIL_FROM: z.string().min(3).default('svc <no-reply@svc.local>'),

  JWT_SECRET: secret(atLeast32Bytes),
  JWT_ISSUER: z.string().min(1).max(200).default('svc'),
  JWT_AUDIENCE: z.string().min(1).max(200).default('svc-api'),
  WEBHOOK_SECRET: secret(sixtyFourHex),
  PAYMENT_WEBHOOK_SECRET: secret((s) => (s.length >= 16 ? null : 'must be at least 16 characters')),
  KEY_ENCRYPTION_KEY: secret(sixtyFourHex),
  CONSOLE_SECRET: secret(atLeast32Bytes),
  CONSOLE_ACCOUNTS_URL: url.optional(),
  CONSOLE_RAG_URL: url.optional(),
  BCRYPT_COST: z.coerce.number().int().min(10).max(15).default(10),
  LOGIN_ATTEMPTS_PER_IP_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(30),
  DEADLINE_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  LOGIN_FAILURES_PER_EMAIL: z.coerce.number().int().min(1).max(1000).default(10),
  SIGNUPS_PER_IP_PER_HOUR: z.coerce.number().int().min(1).max(1_000_000).default(10),
  SIGNUPS_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(60),
  BCRYPT_THREADS: z.coerce.number().int().min(1).max(64).default(2),
  BCRYPT_QUEUE: z.coerce.number().int().min(0).max(100_000).default(50),
  KEY_VALIDATION_PER_IP_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(6000),
  KEY_ROTATIONS_PER_HOUR: z.coerce.number().int().min(1).max(1000).default(3),
  VERIFICATION_FLUSH_MS: z.coerce.number().int().min(500).max(60_000).default(DEFAULT_VERIFICATION_FLUSH_MS),
  KEY_ROTATION_GRACE_SECONDS: z.coerce.number().int().min(0).max(86_400).default(300),
  TEAM_INVITATION_TTL_SECONDS: z.coerce.number().int().min(1).max(2_592_000).default(604_800),
  CONSOLE_PUBLIC_URL: url.optional(),
  ACCOUNTS_PUBLIC_URL: url.optional(),
  SSO_ALLOW_HTTP_ISSUERS: z.enum(['true', 'false'], { error: 'must be true or false' }).default('false'),
  OAUTH_CLIENT_METADATA_ALLOW_LOCAL: z.enum(['true', 'false'], { error: 'must be true or false' }).default('false'),

  PAYMENT_VARIANT_TIERS: variantTiers.default(new Map()),
  PAYMENT_STORE_ID: z.string().regex(/^\d+$/, { error: "must be the provider's numeric store id" }).optional(),
  PAYMENT_ALLOW_TEST_MODE: z.enum(['true', 'false'], { error: 'must be true or false' }).optional(),
  PAYMENT_API_KEY: secret((s) => (/^\S{20,}$/.test(s) ? null : "must be the provider's API key (20 or more characters, no spaces)")),
  PAYMENT_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(60_000).max(604_800_000).default(86_400_000),
  PRICING_URL: url.optional(),
  REACTIVATE_URL: url.optional(),

  ACCOUNTS_PORT: port(8081),
  KEYS_PORT: port(8082),
  WEBHOOKS_PORT: port(8083),
  RAG_PORT: port(8084),
  MCP_PORT: port(8085),
  CONSOLE_PORT: port(8086),
  OPS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  ADMIN_PORT: z.coerce.number().int().min(1).max(65535).optional(),

  RAG_ROOTS: z
    .string()
    .transform((s) =>
      s
        .split(':')
        .map((x) => x.trim())
        .filter((x) => x.length > 0),
    )
    .pipe(
      z
        .array(z.string().regex(/^\//, { error: 'each root must be an absolute path' }))
        .min(1, { error: 'must name at least one absolute path' }),
    )
    .optional(),
  RAG_DATA_DIR: z.string().regex(/^\//, { error: 'must be an absolute path' }).optional(),
  EMBEDDING_MODEL_DIR: z.string().min(1).optional(),
  EMBEDDING_THREADS: z.coerce.number().int().min(1).max(64).default(2),
  AUTH_URL: url.optional(),
  RAG_MAX_FILE_BYTES: z.coerce.number().int().min(1024).max(100_000_000).default(1_000_000),
  RAG_PUSH_BODY_LIMIT: z
    .string()
    .regex(/^\d+(b|kb|mb)$/i, { error: 'must look like 10mb' })
    .default('10mb'),
  RAG_PUSH_MAX_FILES: z.coerce.number().int().min(1).max(100_000).default(2000),
  RAG_QUERY_CACHE_ENTRIES: z.coerce.number().int().min(0).max(1_000_000).default(1000),
  RAG_ROOTS_LAYOUT: z.enum(['per-customer', 'shared'], { error: 'must be per-customer or shared' }).default('per-customer'),
  RAG_CUSTOMER_FOLDERS: customerFolders,
  RAG_MAX_COLLECTIONS: perTier({ free: 0, pro: 20, team: 100 }),
  RAG_PUSHED_MB: perTier({ free: 0, pro: 200, team: 1000 }),
  RAG_MAX_PENDING_JOBS: perTier({ free: 1, pro: 4, team: 16 }),
  RAG_PUSHED_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  RAG_OPEN_INDEXES: z.coerce.number().int().min(1).max(10_000).default(16),
  RAG_INDEX_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  RAG_WORK_THREADS: z.coerce.number().int().min(1).max(64).default(1),
  RAG_WORK_MEMORY_MB: z.coerce.number().int().min(64).max(65_536).default(512),
  RAG_FILE_BUDGET_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  RAG_LIST_BUDGET_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  RAG_JOB_BUDGET_MS: z.coerce.number().int().min(1000).max(86_400_000).default(1_800_000),
  RAG_JOB_MAX_STARTS: z.coerce.number().int().min(1).max(100).default(3),
  RAG_INDEX_ENGINE: z.enum(['sqlite', 'postgres'], { error: 'must be sqlite or postgres' }).default('sqlite'),
  // Empty is unset: the local stack hands every process its variables, this one empty when it runs no PostgreSQL.
  RAG_DATABASE_URL: z
    .string()
    .refine((v) => v === '' || /^postgres(ql)?:\/\/[^/]/.test(v), { error: 'must be a postgres:// or postgresql:// URL' })
    .optional(),
  RAG_DATABASE_POOL: z.coerce.number().int().min(1).max(1000).default(10),
  RAG_RUN_INDEXER: z.enum(['true', 'false'], { error: 'must be true or false' }).default('true'),
  CHROMIUM_PATH: z.string().regex(/^\//, { error: 'must be an absolute path to a Chromium executable' }).optional(),
  CAPTURE_ALLOWED_HOSTS: z
    .string()
    .transform((csv, ctx) => {
      try {
        return parseAllowList(csv);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message.replace(/^CAPTURE_ALLOWED_HOSTS: /, '') });
        return z.NEVER;
      }
    })
    .optional(),
  RAG_PUBLIC_URL: url.optional(),
  /** The MCP server's public URL (its /mcp endpoint): the resource OAuth access tokens are minted for (RFC 8707). */
  MCP_PUBLIC_URL: url.optional(),
  VISION_POOL_SIZE: z.coerce.number().int().min(1).max(16).default(2),
  CAPTURE_TIMEOUT_MS: z.coerce.number().int().min(1000).max(120_000).default(30_000),
  CAPTURE_MAX_BYTES: z.coerce.number().int().min(100_000).max(200_000_000).default(15_000_000),
  VISION_WORK_MEMORY_MB: z.coerce.number().int().min(64).max(16_384).default(512),
  VISION_WORK_TIMEOUT_MS: z.coerce.number().int().min(1000).max(300_000).default(20_000),
  VISION_STORAGE_MB_PRO: z.coerce.number().int().min(1).max(10_000_000).default(1024),
  VISION_STORAGE_MB_TEAM: z.coerce.number().int().min(1).max(10_000_000).default(10_240),
  VISION_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  LLM_URL: url.optional(),
  LLM_MODEL: z.string().min(1).max(200).optional(),
  LLM_API_KEY: z.string().min(1).optional(),
  LLM_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(60_000),
  HTTP_HOST: z.string().min(1).default('0.0.0.0'),
  HTTP_BODY_LIMIT: z
    .string()
    .regex(/^\d+(b|kb|mb)$/i, { error: 'must look like 100kb' })
    .default('100kb'),
  TRUST_PROXY: z
    .string()
    .transform((value, ctx) => {
      try {
        return parseTrustProxy(value);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    })
    .default(['loopback']),
  ...TRACING_SCHEMA,
});

type Raw = z.infer<typeof schema>;

/** Every variable this module reads; a test keeps .env.example in step with it. */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(schema.shape);

export interface Secrets {
  jwtSecret: string;
  webhookSecret: string;
  paymentWebhookSecret: string;
  keyEncryptionKey: Buffer;
}

export interface Config {
  env: Raw['NODE_ENV'];
  logLevel: Raw['LOG_LEVEL'];
  kafka: {
    brokers: string[];
    clientId: string;
    /** Prefix of every topic and consumer group this deployment uses. */
    topicPrefix: string;
    partitions: number;
    replicationFactor: number;
    publishTimeoutMs: number;
    handlerRetries: number;
    /** How long the broker waits for a silent consumer before giving its partitions to others. */
    sessionTimeoutMs: number;
    /** How often consumers commit handled offsets; 0: after every chunk; unset: the runner's default. */
    commitIntervalMs: number | undefined;
    /** TLS to the brokers (KAFKA_SSL*); unset: plaintext. */
    ssl?: KafkaTls;
    /** SASL authentication (KAFKA_SASL_*); unset: none. The password never shows when this is logged. */
    sasl?: KafkaSasl;
  };
  /**
   * The Confluent-compatible schema registry the event codec writes ids of and reads schemas from
   * (docs/architecture.md, "Schema registry"). The password never shows when this is logged.
   */
  schemaRegistry: {
    url: string;
    auth?: { username: string; password: string };
    /** Register the catalog's schemas before starting (`svc start`, tests); production runs `svc schemas register` at deploy. */
    registerAtStart: boolean;
  };
  /** How long an effect (an e-mail, a key) claimed by a process that died keeps others out. */
  effectLeaseMs: number;
  /** How long a stopping process may take, in all, before it exits anyway (after `shutdownDelayMs`). */
  shutdownGraceMs: number;
  /**
   * How long a stopping process keeps serving, unready, before it closes its listeners: the time the
   * cluster takes to drop the pod from its Services' endpoints (SHUTDOWN_DELAY_MS; 0 outside Kubernetes).
   */
  shutdownDelayMs: number;
  /** How long each HTTP face lets requests in flight finish once its listener is closed (within the grace). */
  shutdownDrainMs: number;
  /**
   * How far the old generation may grow past what survived a full collection before the next one, in
   * percent (0: V8's own choice). Memory for fewer full collections: see `setHeapGrowth`.
   */
  heapGrowthPercent: number;
  mongo: { uri: string; db: string };
  smtp: { url: string; from: string };
  secrets: Secrets;
  /** Names of secrets that were generated because development did not supply them. */
  generatedSecrets: string[];
  bcryptCost: number;
  loginLimits: { perIpPerMinute: number; failuresPerEmail: number };
  signupLimits: { perIpPerHour: number; perMinute: number };
  /** bcrypt runs on this many worker threads; this many more hashes may wait, then 503. */
  passwordHashing: { threads: number; queue: number };
  /** Requests per client IP per minute on /validate, /usage and the gate. */
  keyValidationPerIpPerMinute: number;
  /** POST /keys/rotate per subscription per clock hour. */
  keyRotationsPerHour: number;
  /**
   * How often a keys process writes its verification counts: how old GET /usage's counts can be,
   * and what a killed process loses. Each write rewrites up to 32 documents per process.
   */
  verificationFlushMs: number;
  /** How long a rotated key keeps working beside its replacement, unless the rotation says otherwise. */
  keyRotationGraceSeconds: number;
  /** How long a team invitation's link can be accepted. */
  teamInvitationTtlSeconds: number;
  /** Where customers' browsers reach the console: links in e-mails (team invitations) point there. */
  publicConsoleUrl: string;
  /**
   * Team single sign-on (services/accounts/sso): where browsers reach the accounts service (the
   * providers' redirect URI is its /auth/sso/callback), and whether plain-http issuers are accepted
   * (a provider on this machine, in development and tests; never in production).
   */
  sso: { publicAccountsUrl: string; callbackUrl: string; allowHttpIssuers: boolean };
  /**
   * Whether assistants' client ID metadata documents may be fetched from local and private addresses
   * (an assistant on this machine, in development and tests; never in production).
   */
  oauthClientMetadataAllowLocal: boolean;
  /** How often billing looks for cancelled subscriptions whose paid period is over. */
  deadlineIntervalMs: number;
  variantTiers: ReadonlyMap<string, Tier>;
  /** Which provider webhooks billing acts on: one store (null: any), test mode or not. */
  payments: {
    storeId: string | null;
    allowTestMode: boolean;
    /** The provider's API key (PAYMENT_API_KEY) for checkouts and reconciliation; null: both off. Never logged. */
    apiKey: string | null;
    /** How often billing asks the provider for the store's subscriptions (default nightly). */
    reconcileIntervalMs: number;
  };
  /** `iss` and `aud` of the access tokens: set by accounts, required by everyone who reads them. */
  jwt: { issuer: string; audience: string };
  urls: { pricing: string; reactivate: string };
  http: { host: string; bodyLimit: string; trustProxy: TrustProxy };
  ports: { accounts: number; keys: number; webhooks: number; rag: number; mcp: number; console: number; ops?: number; admin?: number };
  /** Where the customer console (services/console) reaches the routes it calls for the signed-in customer. */
  console: {
    /**
     * CONSOLE_SECRET: the CSRF tokens and the sealed API-key cookie are derived from it. Only the
     * console needs it, so production leaves it null when unset and the console refuses to start;
     * development makes a throwaway one (`svc start` keeps one in the data folder).
     */
    secret: string | null;
    accountsUrl: string;
    keysUrl: string;
    ragUrl: string;
  };
  rag: {
    /** Folders a collection's projectPath must resolve inside. */
    roots: string[];
    /** Where the embedded index stores (one SQLite file per collection) live: derived data. */
    dataDir: string;
    /** A model folder (model.json + files); undefined: the one the install step provisions. */
    embeddingModelDir: string | undefined;
    embeddingThreads: number;
    maxFileBytes: number;
    pushBodyLimit: string;
    pushMaxFiles: number;
    queryCacheEntries: number;
    /** Who may index which folder (services/rag/project-path.ts). */
    folders: { layout: 'per-customer' | 'shared'; roots: string[]; customerFolders: ReadonlyMap<string, readonly string[]> };
    /** Per-customer bounds by tier: collections, bytes of pushed sources kept, index jobs queued or running at once. */
    limits: {
      collections: Readonly<Record<Tier, number>>;
      pushedBytes: Readonly<Record<Tier, number>>;
      pendingJobs: Readonly<Record<Tier, number>>;
    };
    /** Pushed files untouched this long are deleted by the retention sweep. */
    pushedRetentionMs: number;
    /** Collection indexes a process keeps open (least recently used closed past it). */
    openIndexes: number;
    /** Index jobs one process runs at once (each on its own partition). */
    indexConcurrency: number;
    /** Worker threads for index work, each task's heap and time budgets, and the job's. */
    work: { threads: number; memoryMb: number; fileBudgetMs: number; listBudgetMs: number; jobBudgetMs: number; maxStarts: number };
    /**
     * Where the collections' indexes live: SQLite files in `dataDir` held by one process, or one
     * PostgreSQL database (pgvector) that every replica shares, through a pool of `poolSize` connections per process.
     */
    indexEngine: { kind: 'sqlite' } | { kind: 'postgres'; url: string; poolSize: number };
    /** Whether the rag/mcp faces run index jobs themselves; false leaves them to `svc run indexer` (postgres only). */
    runIndexer: boolean;
  };
  vision: {
    /** undefined: the Chromium deploy/local/chromium/provision.sh unpacked into the cache. */
    chromiumPath: string | undefined;
    /** Private hosts captures may reach anyway (tests' fixture sites; an intranet you mean to test). */
    allowedHosts: AllowList;
    poolSize: number;
    captureTimeoutMs: number;
    /** Page weight: bytes a capture may receive. */
    captureMaxBytes: number;
    /** The image pool's budget per task: decoding and comparing screenshots (memory also bounds the decoded pixels). */
    work: { memoryMb: number; timeoutMs: number };
    /** What one customer's stored screenshots and diffs may take, by tier. */
    storageMb: { pro: number; team: number };
    /** Screenshots older than this are deleted (but those a suite uses as its baseline). */
    retentionDays: number;
  };
  /** Where clients reach the RAG service (screenshot URLs are built on it). */
  publicRagUrl: string;
  /** The MCP endpoint as assistants reach it: the OAuth resource identifier. */
  publicMcpUrl: string;
  /** An OpenAI-compatible chat model that may judge what validation's evidence leaves undecided; null: none. */
  llm: { url: string; model: string; apiKey: string | undefined; timeoutMs: number } | null;
  /** The key-validation service the premium faces (RAG, MCP) validate keys against. */
  authUrl: string;
  /** OpenTelemetry traces (OTEL_*); null: off. */
  tracing: TracingSettings | null;
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Local defaults match the ports of the development stack started by `svc start`. */
const DEV_DEFAULTS = {
  KAFKA_BROKERS: ['127.0.0.1:9092'],
  MONGODB_URI: 'mongodb://127.0.0.1:27017/',
  SMTP_URL: 'smtp://127.0.0.1:1025',
  SCHEMA_REGISTRY_URL: 'http://127.0.0.1:8091/apis/ccompat/v7',
};

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path[0] === undefined ? '(env)' : String(i.path[0])}: ${i.message}`));
  }
  const raw = parsed.data;
  const production = raw.NODE_ENV === 'production';
  const problems: string[] = [];
  const generated: string[] = [];

  const required = <T>(name: string, value: T | undefined, devValue: T): T => {
    if (value !== undefined) return value;
    if (production) {
      problems.push(`${name}: required when NODE_ENV=production`);
      return devValue;
    }
    return devValue;
  };
  const secretOrGenerate = (name: string, value: string | undefined, make: () => string): string => {
    if (value !== undefined) return value;
    if (production) {
      problems.push(`${name}: required when NODE_ENV=production`);
      return '';
    }
    generated.push(name);
    return make();
  };
  const randomHex = () => randomBytes(32).toString('hex');
  // The addresses users are sent to (SSO redirects, invitation and verification links, screenshot URLs,
  // the pricing page of a 402): a localhost fallback in production would send them to their own machine.
  const publicUrl = (name: string, value: string | undefined, devValue: string, trimSlash = true): string => {
    if (value === undefined && production)
      problems.push(
        `${name}: required when NODE_ENV=production (the public address users are sent to; ${devValue} would point at their own machine)`,
      );
    const chosen = value ?? devValue;
    return trimSlash ? chosen.replace(/\/$/, '') : chosen;
  };

  const config: Config = {
    env: raw.NODE_ENV,
    logLevel: raw.LOG_LEVEL,
    kafka: {
      brokers: required('KAFKA_BROKERS', raw.KAFKA_BROKERS, DEV_DEFAULTS.KAFKA_BROKERS),
      clientId: raw.KAFKA_CLIENT_ID,
      topicPrefix: raw.KAFKA_TOPIC_PREFIX,
      partitions: raw.KAFKA_TOPIC_PARTITIONS ?? (production ? PRODUCTION_TOPIC_PARTITIONS : 3),
      replicationFactor: raw.KAFKA_REPLICATION_FACTOR,
      publishTimeoutMs: raw.KAFKA_PUBLISH_TIMEOUT_MS,
      handlerRetries: raw.KAFKA_HANDLER_RETRIES,
      sessionTimeoutMs: raw.KAFKA_SESSION_TIMEOUT_MS,
      commitIntervalMs: raw.KAFKA_COMMIT_INTERVAL_MS,
      ...kafkaSecurity(raw, production, problems),
    },
    schemaRegistry: schemaRegistryConfig(raw, required, problems),
    effectLeaseMs: raw.EFFECT_LEASE_MS,
    shutdownGraceMs: raw.SHUTDOWN_GRACE_MS,
    shutdownDelayMs: raw.SHUTDOWN_DELAY_MS,
    shutdownDrainMs: shutdownDrain(raw, problems),
    heapGrowthPercent: raw.HEAP_GROWTH_PERCENT,
    mongo: { uri: required('MONGODB_URI', raw.MONGODB_URI, DEV_DEFAULTS.MONGODB_URI), db: raw.MONGODB_DB },
    smtp: { url: required('SMTP_URL', raw.SMTP_URL, DEV_DEFAULTS.SMTP_URL), from: raw.MAIL_FROM },
    secrets: {
      jwtSecret: secretOrGenerate('JWT_SECRET', raw.JWT_SECRET, randomHex),
      webhookSecret: secretOrGenerate('WEBHOOK_SECRET', raw.WEBHOOK_SECRET, randomHex),
      paymentWebhookSecret: secretOrGenerate('PAYMENT_WEBHOOK_SECRET', raw.PAYMENT_WEBHOOK_SECRET, randomHex),
      keyEncryptionKey: Buffer.from(secretOrGenerate('KEY_ENCRYPTION_KEY', raw.KEY_ENCRYPTION_KEY, randomHex), 'hex'),
    },
    generatedSecrets: generated,
    bcryptCost: raw.BCRYPT_COST,
    deadlineIntervalMs: raw.DEADLINE_INTERVAL_MS,
    loginLimits: { perIpPerMinute: raw.LOGIN_ATTEMPTS_PER_IP_PER_MINUTE, failuresPerEmail: raw.LOGIN_FAILURES_PER_EMAIL },
    signupLimits: { perIpPerHour: raw.SIGNUPS_PER_IP_PER_HOUR, perMinute: raw.SIGNUPS_PER_MINUTE },
    passwordHashing: { threads: raw.BCRYPT_THREADS, queue: raw.BCRYPT_QUEUE },
    keyValidationPerIpPerMinute: raw.KEY_VALIDATION_PER_IP_PER_MINUTE,
    keyRotationsPerHour: raw.KEY_ROTATIONS_PER_HOUR,
    verificationFlushMs: raw.VERIFICATION_FLUSH_MS,
    keyRotationGraceSeconds: raw.KEY_ROTATION_GRACE_SECONDS,
    teamInvitationTtlSeconds: raw.TEAM_INVITATION_TTL_SECONDS,
    publicConsoleUrl: publicUrl('CONSOLE_PUBLIC_URL', raw.CONSOLE_PUBLIC_URL, `http://localhost:${raw.CONSOLE_PORT}`),
    sso: ssoConfig(
      raw,
      publicUrl('ACCOUNTS_PUBLIC_URL', raw.ACCOUNTS_PUBLIC_URL, `http://localhost:${raw.ACCOUNTS_PORT}`),
      production,
      problems,
    ),
    oauthClientMetadataAllowLocal: localClientMetadata(raw, production, problems),
    variantTiers: raw.PAYMENT_VARIANT_TIERS,
    payments: {
      storeId: raw.PAYMENT_STORE_ID ?? null,
      allowTestMode: (raw.PAYMENT_ALLOW_TEST_MODE ?? (raw.NODE_ENV === 'development' ? 'true' : 'false')) === 'true',
      apiKey: raw.PAYMENT_API_KEY ?? null,
      reconcileIntervalMs: raw.PAYMENT_RECONCILE_INTERVAL_MS,
    },
    jwt: { issuer: raw.JWT_ISSUER, audience: raw.JWT_AUDIENCE },
    urls: {
      pricing: publicUrl('PRICING_URL', raw.PRICING_URL, `http://localhost:${raw.ACCOUNTS_PORT}/pricing`, false),
      reactivate: publicUrl('REACTIVATE_URL', raw.REACTIVATE_URL, `http://localhost:${raw.ACCOUNTS_PORT}/billing`, false),
    },
    http: { host: raw.HTTP_HOST, bodyLimit: raw.HTTP_BODY_LIMIT, trustProxy: raw.TRUST_PROXY },
    ports: {
      accounts: raw.ACCOUNTS_PORT,
      keys: raw.KEYS_PORT,
      webhooks: raw.WEBHOOKS_PORT,
      rag: raw.RAG_PORT,
      mcp: raw.MCP_PORT,
      console: raw.CONSOLE_PORT,
      ...(raw.OPS_PORT !== undefined ? { ops: raw.OPS_PORT } : {}),
      ...(raw.ADMIN_PORT !== undefined ? { admin: raw.ADMIN_PORT } : {}),
    },
    rag: ragConfig(raw, required, problems),
    vision: visionConfig(raw),
    publicRagUrl: publicUrl('RAG_PUBLIC_URL', raw.RAG_PUBLIC_URL, `http://localhost:${raw.RAG_PORT}`),
    publicMcpUrl: publicUrl('MCP_PUBLIC_URL', raw.MCP_PUBLIC_URL, `http://localhost:${raw.MCP_PORT}/mcp`),
    authUrl: required('AUTH_URL', raw.AUTH_URL, `http://127.0.0.1:${raw.KEYS_PORT}`),
    console: {
      secret: raw.CONSOLE_SECRET ?? (production ? null : randomHex()),
      accountsUrl: (raw.CONSOLE_ACCOUNTS_URL ?? `http://127.0.0.1:${raw.ACCOUNTS_PORT}`).replace(/\/$/, ''),
      keysUrl: (raw.AUTH_URL ?? `http://127.0.0.1:${raw.KEYS_PORT}`).replace(/\/$/, ''),
      ragUrl: (raw.CONSOLE_RAG_URL ?? `http://127.0.0.1:${raw.RAG_PORT}`).replace(/\/$/, ''),
    },
    llm: llmConfig(raw, problems),
    tracing: tracingSettings(raw, problems),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** As SaslCredentials: the password behind a getter, so a logged config (or part of it) never shows it. */
class RegistryCredentials {
  readonly username: string;
  readonly #password: string;

  constructor(username: string, password: string) {
    this.username = username;
    this.#password = password;
  }

  get password(): string {
    return this.#password;
  }
}

function schemaRegistryConfig(
  raw: Raw,
  required: (name: string, value: string | undefined, devValue: string) => string,
  problems: string[],
): Config['schemaRegistry'] {
  const url = required('SCHEMA_REGISTRY_URL', raw.SCHEMA_REGISTRY_URL, DEV_DEFAULTS.SCHEMA_REGISTRY_URL);
  const { SCHEMA_REGISTRY_USERNAME: username, SCHEMA_REGISTRY_PASSWORD: password } = raw;
  if ((username === undefined) !== (password === undefined)) {
    problems.push('SCHEMA_REGISTRY_USERNAME and SCHEMA_REGISTRY_PASSWORD: set both or neither');
  }
  // Basic credentials over plain http would cross the network in clear; a loopback registry is the local stack.
  if (username !== undefined && /^http:/i.test(url) && !/^http:\/\/(127\.0\.0\.1|localhost|\[::1\])[:/]/i.test(url)) {
    problems.push('SCHEMA_REGISTRY_URL: must be https:// when credentials are set (they would cross the network in clear)');
  }
  return {
    url: url.replace(/\/+$/, ''),
    ...(username !== undefined && password !== undefined ? { auth: new RegistryCredentials(username, password) } : {}),
    registerAtStart: raw.SCHEMA_REGISTER_AT_START === 'true',
  };
}

/** The HTTP drain fits in the grace, with time left for consumers and clients to close. */
function shutdownDrain(raw: Raw, problems: string[]): number {
  const drain = raw.SHUTDOWN_DRAIN_MS ?? raw.SHUTDOWN_GRACE_MS / 2;
  if (drain >= raw.SHUTDOWN_GRACE_MS)
    problems.push(
      `SHUTDOWN_DRAIN_MS: must be less than SHUTDOWN_GRACE_MS (${raw.SHUTDOWN_GRACE_MS}): consumers and clients close after the drain, within the grace`,
    );
  return drain;
}

function ssoConfig(raw: Raw, publicAccountsUrl: string, production: boolean, problems: string[]): Config['sso'] {
  const allowHttpIssuers = raw.SSO_ALLOW_HTTP_ISSUERS === 'true';
  if (allowHttpIssuers && production)
    problems.push(
      "SSO_ALLOW_HTTP_ISSUERS: must not be true when NODE_ENV=production (a plain-http provider's tokens and the team's client secret would cross the network in clear)",
    );
  return { publicAccountsUrl, callbackUrl: `${publicAccountsUrl}/auth/sso/callback`, allowHttpIssuers };
}

function localClientMetadata(raw: Raw, production: boolean, problems: string[]): boolean {
  const allow = raw.OAUTH_CLIENT_METADATA_ALLOW_LOCAL === 'true';
  if (allow && production)
    problems.push(
      'OAUTH_CLIENT_METADATA_ALLOW_LOCAL: must not be true when NODE_ENV=production (anyone who names a client_id URL could make the accounts service fetch from the private network)',
    );
  return allow;
}

function llmConfig(raw: Raw, problems: string[]): Config['llm'] {
  if (raw.LLM_URL === undefined) {
    if (raw.LLM_MODEL !== undefined || raw.LLM_API_KEY !== undefined)
      problems.push('LLM_URL: required when LLM_MODEL or LLM_API_KEY is set');
    return null;
  }
  if (raw.LLM_MODEL === undefined) {
    problems.push('LLM_MODEL: required when LLM_URL is set (the model name the endpoint serves)');
    return null;
  }
  return { url: raw.LLM_URL.replace(/\/$/, ''), model: raw.LLM_MODEL, apiKey: raw.LLM_API_KEY, timeoutMs: raw.LLM_TIMEOUT_MS };
}

function visionConfig(raw: Raw): Config['vision'] {
  return {
    chromiumPath: raw.CHROMIUM_PATH,
    allowedHosts: raw.CAPTURE_ALLOWED_HOSTS ?? [],
    poolSize: raw.VISION_POOL_SIZE,
    captureTimeoutMs: raw.CAPTURE_TIMEOUT_MS,
    captureMaxBytes: raw.CAPTURE_MAX_BYTES,
    work: { memoryMb: raw.VISION_WORK_MEMORY_MB, timeoutMs: raw.VISION_WORK_TIMEOUT_MS },
    storageMb: { pro: raw.VISION_STORAGE_MB_PRO, team: raw.VISION_STORAGE_MB_TEAM },
    retentionDays: raw.VISION_RETENTION_DAYS,
  };
}

/** Development's folders for the retrieval service, under the working directory's .data/dev. */
const DEV_DATA = resolve('.data', 'dev');

const mapValues = (values: Readonly<Record<Tier, number>>, f: (n: number) => number): Record<Tier, number> =>
  Object.fromEntries(TIERS.map((t) => [t, f(values[t])])) as Record<Tier, number>;

function ragConfig(raw: Raw, required: <T>(name: string, value: T | undefined, devValue: T) => T, problems: string[]): Config['rag'] {
  const roots = required('RAG_ROOTS', raw.RAG_ROOTS, [join(DEV_DATA, 'workspace')]);
  return {
    roots,
    dataDir: required('RAG_DATA_DIR', raw.RAG_DATA_DIR, join(DEV_DATA, 'rag')),
    embeddingModelDir: raw.EMBEDDING_MODEL_DIR,
    embeddingThreads: raw.EMBEDDING_THREADS,
    maxFileBytes: raw.RAG_MAX_FILE_BYTES,
    pushBodyLimit: raw.RAG_PUSH_BODY_LIMIT,
    pushMaxFiles: raw.RAG_PUSH_MAX_FILES,
    queryCacheEntries: raw.RAG_QUERY_CACHE_ENTRIES,
    folders: { layout: raw.RAG_ROOTS_LAYOUT, roots, customerFolders: raw.RAG_CUSTOMER_FOLDERS },
    limits: {
      collections: raw.RAG_MAX_COLLECTIONS,
      pushedBytes: mapValues(raw.RAG_PUSHED_MB, (mb) => mb * 1024 * 1024),
      pendingJobs: raw.RAG_MAX_PENDING_JOBS,
    },
    pushedRetentionMs: raw.RAG_PUSHED_RETENTION_DAYS * 86_400_000,
    openIndexes: raw.RAG_OPEN_INDEXES,
    indexConcurrency: raw.RAG_INDEX_CONCURRENCY,
    work: {
      threads: raw.RAG_WORK_THREADS,
      memoryMb: raw.RAG_WORK_MEMORY_MB,
      fileBudgetMs: raw.RAG_FILE_BUDGET_MS,
      listBudgetMs: raw.RAG_LIST_BUDGET_MS,
      jobBudgetMs: raw.RAG_JOB_BUDGET_MS,
      maxStarts: raw.RAG_JOB_MAX_STARTS,
    },
    indexEngine: ragIndexEngine(raw, problems),
    runIndexer: raw.RAG_RUN_INDEXER === 'true',
  };
}

function ragIndexEngine(raw: Raw, problems: string[]): Config['rag']['indexEngine'] {
  if (raw.RAG_INDEX_ENGINE === 'sqlite') {
    if (raw.RAG_RUN_INDEXER === 'false')
      problems.push(
        "RAG_RUN_INDEXER: false needs RAG_INDEX_ENGINE=postgres (with sqlite the index files are this process's: an indexer service could not write them)",
      );
    return { kind: 'sqlite' };
  }
  if (!raw.RAG_DATABASE_URL) {
    problems.push(
      'RAG_DATABASE_URL: required when RAG_INDEX_ENGINE=postgres (the PostgreSQL database, with pgvector, that holds the shared index)',
    );
    return { kind: 'sqlite' };
  }
  return { kind: 'postgres', url: raw.RAG_DATABASE_URL, poolSize: raw.RAG_DATABASE_POOL };
}
