import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { CONFIG_VARIABLES, ConfigError, loadConfig } from '../../../services/platform/config.ts';

const hex = 'ab'.repeat(32);

describe('config (unit)', () => {
  it('gives development safe defaults and says which secrets it generated', () => {
    const config = loadConfig({});
    expect(config.env).to.equal('development');
    expect(config.kafka.brokers).to.deep.equal(['127.0.0.1:9092']);
    expect(config.ports).to.deep.equal({ accounts: 8081, keys: 8082, webhooks: 8083, rag: 8084, mcp: 8085, console: 8086 });
    expect(config.console).to.include({
      accountsUrl: 'http://127.0.0.1:8081',
      keysUrl: 'http://127.0.0.1:8082',
      ragUrl: 'http://127.0.0.1:8084',
    });
    expect(config.console.secret).to.match(/^[0-9a-f]{64}$/);
    expect(config.generatedSecrets).to.have.members(['JWT_SECRET', 'WEBHOOK_SECRET', 'PAYMENT_WEBHOOK_SECRET', 'KEY_ENCRYPTION_KEY']);
    expect(config.secrets.keyEncryptionKey).to.have.length(32);
  });

  it('refuses to start production without its servers and secrets, naming each', () => {
    try {
      loadConfig({ NODE_ENV: 'production' });
      expect.fail('should throw');
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      const names = (err as ConfigError).problems.map((p) => p.split(':')[0]);
      expect(names).to.have.members([
        'KAFKA_BROKERS',
        'MONGODB_URI',
        'SMTP_URL',
        'JWT_SECRET',
        'WEBHOOK_SECRET',
        'PAYMENT_WEBHOOK_SECRET',
        'KEY_ENCRYPTION_KEY',
        'RAG_ROOTS',
        'RAG_DATA_DIR',
        'AUTH_URL',
        'SCHEMA_REGISTRY_URL',
        'CONSOLE_PUBLIC_URL',
        'ACCOUNTS_PUBLIC_URL',
        'RAG_PUBLIC_URL',
        'PRICING_URL',
        'REACTIVATE_URL',
        'MCP_PUBLIC_URL',
      ]);
    }
  });

  it('refuses production without each public address, naming it and why (no localhost fallback)', () => {
    const complete = {
      NODE_ENV: 'production',
      KAFKA_BROKERS: 'k1:9092',
      SCHEMA_REGISTRY_URL: 'https://registry.internal/apis/ccompat/v7',
      MONGODB_URI: 'mongodb://m:27017/',
      SMTP_URL: 'smtp://mail:25',
      JWT_SECRET: 'x'.repeat(32),
      WEBHOOK_SECRET: hex,
      PAYMENT_WEBHOOK_SECRET: 'whsec-0123456789abcdef',
      KEY_ENCRYPTION_KEY: hex,
      RAG_ROOTS: '/srv/projects',
      RAG_DATA_DIR: '/var/lib/svc/rag',
      AUTH_URL: 'http://svc-keys:8082',
      CONSOLE_PUBLIC_URL: 'https://console.svc.example',
      ACCOUNTS_PUBLIC_URL: 'https://api.svc.example',
      RAG_PUBLIC_URL: 'https://api.svc.example',
      MCP_PUBLIC_URL: 'https://api.svc.example/mcp',
      PRICING_URL: 'https://console.svc.example/pricing',
      REACTIVATE_URL: 'https://console.svc.example/pricing',
    };
    const config = loadConfig(complete);
    expect(config.publicConsoleUrl).to.equal('https://console.svc.example');
    expect(config.sso.callbackUrl).to.equal('https://api.svc.example/auth/sso/callback');
    expect(config.publicRagUrl).to.equal('https://api.svc.example');
    expect(config.urls.pricing).to.equal('https://console.svc.example/pricing');
    for (const name of ['CONSOLE_PUBLIC_URL', 'ACCOUNTS_PUBLIC_URL', 'RAG_PUBLIC_URL', 'PRICING_URL', 'REACTIVATE_URL'] as const) {
      const { [name]: _left, ...without } = complete;
      try {
        loadConfig(without);
        expect.fail(`${name}: should throw`);
      } catch (err) {
        expect(err, name).to.be.instanceOf(ConfigError);
        expect((err as ConfigError).problems, name).to.have.length(1);
        expect((err as ConfigError).problems[0], name).to.match(
          new RegExp(`^${name}: required when NODE_ENV=production \\(the public address users are sent to; http://localhost:\\d+`),
        );
      }
    }
    // Development keeps its localhost addresses.
    expect(loadConfig({}).publicConsoleUrl).to.equal('http://localhost:8086');
  });

  it('lets the heap grow 300 % past what survived a full collection unless told, 0 to 400', () => {
    expect(loadConfig({}).heapGrowthPercent).to.equal(300);
    expect(loadConfig({ HEAP_GROWTH_PERCENT: '0' }).heapGrowthPercent).to.equal(0);
    expect(loadConfig({ HEAP_GROWTH_PERCENT: '100' }).heapGrowthPercent).to.equal(100);
    for (const bad of ['-1', '401', '2.5', 'lots']) {
      expect(() => loadConfig({ HEAP_GROWTH_PERCENT: bad }), bad).to.throw(/HEAP_GROWTH_PERCENT/);
    }
  });

  it('stops in three timed steps, the drain inside the grace, and creates 12 partitions in production unless told', () => {
    const dev = loadConfig({});
    expect([dev.shutdownDelayMs, dev.shutdownDrainMs, dev.shutdownGraceMs]).to.deep.equal([0, 5000, 10_000]);
    const set = loadConfig({ SHUTDOWN_DELAY_MS: '10000', SHUTDOWN_DRAIN_MS: '35000', SHUTDOWN_GRACE_MS: '50000' });
    expect([set.shutdownDelayMs, set.shutdownDrainMs, set.shutdownGraceMs]).to.deep.equal([10_000, 35_000, 50_000]);
    expect(() => loadConfig({ SHUTDOWN_DRAIN_MS: '20000', SHUTDOWN_GRACE_MS: '20000' })).to.throw(
      /SHUTDOWN_DRAIN_MS: must be less than SHUTDOWN_GRACE_MS/,
    );
    expect(dev.kafka.partitions).to.equal(3);
    expect(loadConfig({ KAFKA_TOPIC_PARTITIONS: '24' }).kafka.partitions).to.equal(24);
  });

  it('accepts a complete production environment', () => {
    const production = {
      NODE_ENV: 'production',
      KAFKA_BROKERS: 'k1:9092, k2:9092',
      MONGODB_URI: 'mongodb://m:27017/',
      SMTP_URL: 'smtp://mail:25',
      SCHEMA_REGISTRY_URL: 'https://registry.internal/apis/ccompat/v7',
      JWT_SECRET: 'x'.repeat(32),
      WEBHOOK_SECRET: hex,
      PAYMENT_WEBHOOK_SECRET: 'whsec-0123456789abcdef',
      KEY_ENCRYPTION_KEY: hex,
      PAYMENT_VARIANT_TIERS: '101:pro,202:team',
      RAG_ROOTS: '/srv/projects:/srv/ci',
      RAG_DATA_DIR: '/var/lib/svc/rag',
      AUTH_URL: 'http://svc-keys:8082',
      CONSOLE_PUBLIC_URL: 'https://console.svc.example',
      ACCOUNTS_PUBLIC_URL: 'https://api.svc.example',
      RAG_PUBLIC_URL: 'https://api.svc.example',
      MCP_PUBLIC_URL: 'https://api.svc.example/mcp',
      PRICING_URL: 'https://console.svc.example/pricing',
      REACTIVATE_URL: 'https://console.svc.example/pricing',
    };
    const config = loadConfig(production);
    expect(config.kafka.brokers).to.deep.equal(['k1:9092', 'k2:9092']);
    expect(config.kafka.partitions).to.equal(12);
    expect(config.rag.roots).to.deep.equal(['/srv/projects', '/srv/ci']);
    expect([...config.variantTiers]).to.deep.equal([
      ['101', 'pro'],
      ['202', 'team'],
    ]);
    expect(config.generatedSecrets).to.deep.equal([]);
    // Only the console needs CONSOLE_SECRET: production leaves it unset (the console refuses to start) rather than making one.
    expect(config.console.secret).to.equal(null);
    expect(loadConfig({ ...production, CONSOLE_SECRET: 'y'.repeat(32) }).console.secret).to.equal('y'.repeat(32));
    expect(() => loadConfig({ ...production, CONSOLE_SECRET: 'short' })).to.throw(/CONSOLE_SECRET: must be at least 32 bytes/);
  });

  const bad: [string, string, RegExp][] = [
    ['RAG_ROOTS', 'relative/path', /RAG_ROOTS: each root must be an absolute path/],
    ['RAG_DATA_DIR', 'data/rag', /RAG_DATA_DIR: must be an absolute path/],
    ['JWT_SECRET', 'short', /JWT_SECRET: must be at least 32 bytes/],
    ['WEBHOOK_SECRET', 'nothex', /WEBHOOK_SECRET: must be 64 hexadecimal/],
    ['KEY_ENCRYPTION_KEY', 'ab'.repeat(16), /KEY_ENCRYPTION_KEY: must be 64 hexadecimal/],
    ['KEYS_PORT', '70000', /KEYS_PORT/],
    ['MONGODB_URI', 'postgres://x', /MONGODB_URI: must be a mongodb/],
    ['PAYMENT_VARIANT_TIERS', '101:gold', /PAYMENT_VARIANT_TIERS: "101:gold" is not variantId:pro\|team/],
    ['PRICING_URL', 'not a url', /PRICING_URL: must be an absolute URL/],
    ['RAG_INDEX_ENGINE', 'mysql', /RAG_INDEX_ENGINE: must be sqlite or postgres/],
    ['RAG_DATABASE_URL', 'mongodb://x', /RAG_DATABASE_URL: must be a postgres:\/\/ or postgresql:\/\/ URL/],
    ['RAG_DATABASE_POOL', '0', /RAG_DATABASE_POOL/],
    ['KAFKA_COMMIT_INTERVAL_MS', '-1', /KAFKA_COMMIT_INTERVAL_MS/],
    ['KAFKA_COMMIT_INTERVAL_MS', 'soon', /KAFKA_COMMIT_INTERVAL_MS/],
    ['VERIFICATION_FLUSH_MS', '100', /VERIFICATION_FLUSH_MS/],
    ['VERIFICATION_FLUSH_MS', '120000', /VERIFICATION_FLUSH_MS/],
  ];
  for (const [name, value, message] of bad) {
    it(`rejects a bad ${name} (${JSON.stringify(value)}) with its name`, () => {
      expect(() => loadConfig({ [name]: value })).to.throw(ConfigError, message);
    });
  }

  it('keeps the code index in SQLite by default, and in PostgreSQL only with its URL', () => {
    expect(loadConfig({}).rag.indexEngine).to.deep.equal({ kind: 'sqlite' });
    expect(() => loadConfig({ RAG_INDEX_ENGINE: 'postgres' })).to.throw(
      ConfigError,
      /RAG_DATABASE_URL: required when RAG_INDEX_ENGINE=postgres/,
    );
    expect(() => loadConfig({ RAG_RUN_INDEXER: 'false' })).to.throw(ConfigError, /RAG_RUN_INDEXER: false needs RAG_INDEX_ENGINE=postgres/);
    expect(loadConfig({}).rag.runIndexer).to.equal(true);
    expect(loadConfig({ RAG_DATABASE_URL: '' }).rag.indexEngine).to.deep.equal({ kind: 'sqlite' });
    expect(() => loadConfig({ RAG_INDEX_ENGINE: 'postgres', RAG_DATABASE_URL: '' })).to.throw(ConfigError, /RAG_DATABASE_URL: required/);
    const shared = { RAG_INDEX_ENGINE: 'postgres', RAG_DATABASE_URL: 'postgres://u:p@db:5432/rag', RAG_RUN_INDEXER: 'false' };
    expect(loadConfig(shared).rag.runIndexer).to.equal(false);
    expect(loadConfig({ RAG_INDEX_ENGINE: 'postgres', RAG_DATABASE_URL: 'postgres://u:p@db:5432/rag' }).rag.indexEngine).to.deep.equal({
      kind: 'postgres',
      url: 'postgres://u:p@db:5432/rag',
      poolSize: 10,
    });
  });

  it('processes test-mode webhooks by default only in development, and as told otherwise', () => {
    expect(loadConfig({}).payments.allowTestMode).to.equal(true);
    expect(loadConfig({ NODE_ENV: 'test' }).payments.allowTestMode).to.equal(false);
    expect(loadConfig({ PAYMENT_ALLOW_TEST_MODE: 'false' }).payments.allowTestMode).to.equal(false);
    expect(loadConfig({ NODE_ENV: 'test', PAYMENT_ALLOW_TEST_MODE: 'true' }).payments.allowTestMode).to.equal(true);
  });

  it("KAFKA_COMMIT_INTERVAL_MS: unset leaves the consumers' default, 0 commits after every chunk", () => {
    expect(loadConfig({}).kafka.commitIntervalMs).to.equal(undefined);
    expect(loadConfig({ KAFKA_COMMIT_INTERVAL_MS: '0' }).kafka.commitIntervalMs).to.equal(0);
    expect(loadConfig({ KAFKA_COMMIT_INTERVAL_MS: '250' }).kafka.commitIntervalMs).to.equal(250);
  });

  it('VERIFICATION_FLUSH_MS: 2 s unless told, from half a second to a minute', () => {
    expect(loadConfig({}).verificationFlushMs).to.equal(2000);
    expect(loadConfig({ VERIFICATION_FLUSH_MS: '10000' }).verificationFlushMs).to.equal(10_000);
    expect(loadConfig({ VERIFICATION_FLUSH_MS: '500' }).verificationFlushMs).to.equal(500);
    expect(() => loadConfig({ VERIFICATION_FLUSH_MS: '60001' })).to.throw(ConfigError, /VERIFICATION_FLUSH_MS/);
  });

  it('documents every variable in .env.example', () => {
    const documented = new Set([...readFileSync('.env.example', 'utf8').matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]));
    expect(CONFIG_VARIABLES.filter((name) => !documented.has(name))).to.deep.equal([]);
  });

  it('PAYMENT_API_KEY: optional (checkout and reconciliation off without it), checked, never echoed; the reconciliation interval', () => {
    expect(loadConfig({}).payments).to.include({ apiKey: null, reconcileIntervalMs: 86_400_000 });
    const key = `eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.${'x'.repeat(40)}`;
    expect(loadConfig({ PAYMENT_API_KEY: key, PAYMENT_RECONCILE_INTERVAL_MS: '3600000' }).payments).to.include({
      apiKey: key,
      reconcileIntervalMs: 3_600_000,
    });
    expect(() => loadConfig({ PAYMENT_API_KEY: 'not a key' }))
      .to.throw(ConfigError, /PAYMENT_API_KEY: must be the provider's API key/)
      .that.satisfies((e: Error) => !e.message.includes('not a key'));
    expect(() => loadConfig({ PAYMENT_RECONCILE_INTERVAL_MS: '1000' })).to.throw(ConfigError, /PAYMENT_RECONCILE_INTERVAL_MS/);
  });

  it('SCHEMA_REGISTRY_*: the URL (required in production), credentials both or neither, over https unless on loopback, the password never shown', () => {
    expect(loadConfig({}).schemaRegistry).to.deep.equal({ url: 'http://127.0.0.1:8091/apis/ccompat/v7', registerAtStart: false });
    expect(() => loadConfig({ NODE_ENV: 'production' })).to.throw(ConfigError, /SCHEMA_REGISTRY_URL: required when NODE_ENV=production/);
    expect(() => loadConfig({ SCHEMA_REGISTRY_URL: 'not a url' })).to.throw(ConfigError, /SCHEMA_REGISTRY_URL/);
    expect(() => loadConfig({ SCHEMA_REGISTRY_USERNAME: 'svc' })).to.throw(ConfigError, /set both or neither/);
    expect(() =>
      loadConfig({
        SCHEMA_REGISTRY_URL: 'http://registry.internal:8081',
        SCHEMA_REGISTRY_USERNAME: 'svc',
        SCHEMA_REGISTRY_PASSWORD: 'pw-secret',
      }),
    )
      .to.throw(ConfigError, /must be https/)
      .that.satisfies((e: Error) => !e.message.includes('pw-secret'));
    const config = loadConfig({
      SCHEMA_REGISTRY_URL: 'https://registry.example.test/apis/ccompat/v7/',
      SCHEMA_REGISTRY_USERNAME: 'svc',
      SCHEMA_REGISTRY_PASSWORD: 'pw-secret',
      SCHEMA_REGISTER_AT_START: 'true',
    });
    expect(config.schemaRegistry.url).to.equal('https://registry.example.test/apis/ccompat/v7');
    expect(config.schemaRegistry.auth?.password).to.equal('pw-secret');
    expect(config.schemaRegistry.registerAtStart).to.equal(true);
    expect(JSON.stringify(config)).not.to.include('pw-secret');
  });

  it('never echoes a rejected secret value', () => {
    expect(() => loadConfig({ JWT_SECRET: 'hunter2' }))
      .to.throw(ConfigError)
      .that.satisfies((e: Error) => !e.message.includes('hunter2'));
  });
});
