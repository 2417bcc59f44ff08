import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { expect } from 'chai';
import { kafkaSecurityOptions } from '../../../events/kafka.ts';
import { ConfigError, loadConfig } from '../../../services/platform/config.ts';

const hex = 'ab'.repeat(32);
const PRODUCTION = {
  NODE_ENV: 'production',
  KAFKA_BROKERS: 'k1:9093',
  MONGODB_URI: 'mongodb://m:27017/',
  SMTP_URL: 'smtp://mail:25',
  SCHEMA_REGISTRY_URL: 'https://registry.internal/apis/ccompat/v7',
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

function problems(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('the configuration was accepted');
}

describe('Kafka TLS and SASL configuration (unit)', () => {
  let dir: string;
  let ca: string;
  let cert: string;
  let key: string;
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'kafka-tls-'));
    // Only the PEM framing is checked at start-up; TLS itself judges the contents when it connects.
    ca = '-----BEGIN CERTIFICATE-----\nMIIBca\n-----END CERTIFICATE-----\n';
    cert = '-----BEGIN CERTIFICATE-----\nMIIBclient\n-----END CERTIFICATE-----\n';
    key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is plaintext without authentication by default', () => {
    const { kafka } = loadConfig({});
    expect(kafka.ssl).to.equal(undefined);
    expect(kafka.sasl).to.equal(undefined);
    expect(kafkaSecurityOptions(kafka)).to.deep.equal({});
  });

  it('builds kafkajs ssl options from the CA, certificate and key files, verifying the broker', () => {
    const { kafka } = loadConfig({
      KAFKA_SSL: 'true',
      KAFKA_SSL_CA_FILE: file('ca.pem', ca),
      KAFKA_SSL_CERT_FILE: file('client.pem', cert),
      KAFKA_SSL_KEY_FILE: file('client.key', key),
    });
    expect(kafkaSecurityOptions(kafka)).to.deep.equal({ ssl: { rejectUnauthorized: true, ca, cert, key } });
  });

  it('takes TLS with the system CAs and no client certificate', () => {
    expect(loadConfig({ KAFKA_SSL: 'true' }).kafka.ssl).to.deep.equal({ rejectUnauthorized: true });
  });

  it('names a certificate file that is missing, not PEM, or encrypted', () => {
    const missing = join(dir, 'nope.pem');
    expect(problems({ KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: missing })).to.deep.equal([
      `KAFKA_SSL_CA_FILE: cannot read ${missing} (ENOENT)`,
    ]);
    expect(problems({ KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: file('ca.txt', 'hello') })[0]).to.match(
      /^KAFKA_SSL_CA_FILE: .* holds no PEM certificate/,
    );
    const encrypted = file('enc.key', '-----BEGIN ENCRYPTED PRIVATE KEY-----\nxx\n-----END ENCRYPTED PRIVATE KEY-----\n');
    expect(problems({ KAFKA_SSL: 'true', KAFKA_SSL_CERT_FILE: file('c.pem', cert), KAFKA_SSL_KEY_FILE: encrypted })[0]).to.match(
      /^KAFKA_SSL_KEY_FILE: .* is encrypted/,
    );
  });

  it('wants a client certificate and its key together', () => {
    expect(problems({ KAFKA_SSL: 'true', KAFKA_SSL_CERT_FILE: file('c.pem', cert) })[0]).to.match(/^KAFKA_SSL_CERT_FILE: .*set both/);
  });

  it('refuses TLS settings without KAFKA_SSL=true, rather than connecting in plaintext', () => {
    expect(problems({ KAFKA_SSL_CA_FILE: file('ca.pem', ca) })).to.deep.equal([
      'KAFKA_SSL_CA_FILE: only used with KAFKA_SSL=true (set it, or unset KAFKA_SSL_CA_FILE)',
    ]);
    expect(problems({ KAFKA_SSL: 'yes' })[0]).to.equal('KAFKA_SSL: must be true or false');
  });

  it('turns certificate checks off in development only', () => {
    expect(loadConfig({ KAFKA_SSL: 'true', KAFKA_SSL_REJECT_UNAUTHORIZED: 'false' }).kafka.ssl).to.deep.equal({
      rejectUnauthorized: false,
    });
    expect(problems({ ...PRODUCTION, KAFKA_SSL: 'true', KAFKA_SSL_REJECT_UNAUTHORIZED: 'false' })[0]).to.match(
      /^KAFKA_SSL_REJECT_UNAUTHORIZED: false is refused when NODE_ENV=production/,
    );
  });

  for (const mechanism of ['plain', 'scram-sha-256', 'scram-sha-512'] as const) {
    it(`builds kafkajs sasl options for ${mechanism}`, () => {
      const { kafka } = loadConfig({ KAFKA_SASL_MECHANISM: mechanism, KAFKA_SASL_USERNAME: 'svc', KAFKA_SASL_PASSWORD: 'pw-1' });
      expect(kafkaSecurityOptions(kafka)).to.deep.equal({ sasl: { mechanism, username: 'svc', password: 'pw-1' } });
    });
  }

  it('wants the mechanism, user name and password together', () => {
    expect(problems({ KAFKA_SASL_MECHANISM: 'scram-sha-512' })).to.have.members([
      'KAFKA_SASL_USERNAME: required when KAFKA_SASL_MECHANISM is set',
      'KAFKA_SASL_PASSWORD: required when KAFKA_SASL_MECHANISM is set',
    ]);
    expect(problems({ KAFKA_SASL_USERNAME: 'svc', KAFKA_SASL_PASSWORD: 'pw' })[0]).to.match(/^KAFKA_SASL_MECHANISM: required when/);
    expect(problems({ KAFKA_SASL_MECHANISM: 'gssapi', KAFKA_SASL_USERNAME: 'svc', KAFKA_SASL_PASSWORD: 'pw' })).to.deep.equal([
      'KAFKA_SASL_MECHANISM: must be plain, scram-sha-256 or scram-sha-512',
    ]);
  });

  it('never shows the password: not in errors, JSON or inspect', () => {
    const password = 'hunter2-the-secret';
    for (const found of problems({ KAFKA_SASL_MECHANISM: 'kerberos', KAFKA_SASL_USERNAME: 'svc', KAFKA_SASL_PASSWORD: password })) {
      expect(found).not.to.include(password);
    }
    const config = loadConfig({ KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'svc', KAFKA_SASL_PASSWORD: password });
    expect(config.kafka.sasl?.password).to.equal(password);
    expect(JSON.stringify(config)).not.to.include(password);
    expect(inspect(config, { depth: 10 })).not.to.include(password);
    expect(JSON.stringify(config.kafka.sasl)).to.equal('{"mechanism":"scram-sha-512","username":"svc"}');
  });

  it('refuses PLAIN over plaintext in production (the password would cross the network as is)', () => {
    const sasl = { KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'svc', KAFKA_SASL_PASSWORD: 'pw' };
    expect(problems({ ...PRODUCTION, ...sasl })[0]).to.match(/^KAFKA_SASL_MECHANISM: plain sends the password in clear/);
    expect(loadConfig({ ...PRODUCTION, ...sasl, KAFKA_SSL: 'true' }).kafka.sasl?.mechanism).to.equal('plain');
    expect(loadConfig({ ...PRODUCTION, ...sasl, KAFKA_SASL_MECHANISM: 'scram-sha-512' }).kafka.sasl?.mechanism).to.equal('scram-sha-512');
  });
});
