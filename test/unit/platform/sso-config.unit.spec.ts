import { expect } from 'chai';
import { loadConfig } from '../../../services/platform/config.ts';

const hex = 'ab'.repeat(32);
const production = {
  NODE_ENV: 'production',
  KAFKA_BROKERS: 'k1:9092',
  MONGODB_URI: 'mongodb://db:27017',
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

describe('config: team single sign-on (unit)', () => {
  it('accepts only https issuers by default, and names the callback from ACCOUNTS_PUBLIC_URL', () => {
    const config = loadConfig({ ACCOUNTS_PORT: '9001' });
    expect(config.sso).to.deep.equal({
      publicAccountsUrl: 'http://localhost:9001',
      callbackUrl: 'http://localhost:9001/auth/sso/callback',
      allowHttpIssuers: false,
    });
    const deployed = loadConfig({ ...production, ACCOUNTS_PUBLIC_URL: 'https://accounts.svc.example/' });
    expect(deployed.sso.callbackUrl).to.equal('https://accounts.svc.example/auth/sso/callback');
  });

  it('takes SSO_ALLOW_HTTP_ISSUERS=true outside production, and refuses it in production with the reason', () => {
    expect(loadConfig({ SSO_ALLOW_HTTP_ISSUERS: 'true' }).sso.allowHttpIssuers).to.equal(true);
    expect(() => loadConfig({ SSO_ALLOW_HTTP_ISSUERS: 'yes' })).to.throw(/SSO_ALLOW_HTTP_ISSUERS: must be true or false/);
    expect(() => loadConfig({ ...production, SSO_ALLOW_HTTP_ISSUERS: 'true' })).to.throw(
      /SSO_ALLOW_HTTP_ISSUERS: must not be true when NODE_ENV=production \(a plain-http provider's tokens/,
    );
    expect(loadConfig(production).sso.allowHttpIssuers).to.equal(false);
  });
  it('takes OAUTH_CLIENT_METADATA_ALLOW_LOCAL=true outside production, and refuses it in production with the reason', () => {
    expect(loadConfig({}).oauthClientMetadataAllowLocal).to.equal(false);
    expect(loadConfig({ OAUTH_CLIENT_METADATA_ALLOW_LOCAL: 'true' }).oauthClientMetadataAllowLocal).to.equal(true);
    expect(() => loadConfig({ OAUTH_CLIENT_METADATA_ALLOW_LOCAL: '1' })).to.throw(
      /OAUTH_CLIENT_METADATA_ALLOW_LOCAL: must be true or false/,
    );
    expect(() => loadConfig({ ...production, OAUTH_CLIENT_METADATA_ALLOW_LOCAL: 'true' })).to.throw(
      /OAUTH_CLIENT_METADATA_ALLOW_LOCAL: must not be true when NODE_ENV=production \(anyone who names a client_id URL/,
    );
  });
});
