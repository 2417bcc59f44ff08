import { expect } from 'chai';
import express from 'express';
import { ConfigError, loadConfig } from '../../../services/platform/config.ts';
import { parseTrustProxy } from '../../../services/platform/http/trust-proxy.ts';

describe('TRUST_PROXY (unit)', () => {
  it("defaults to loopback, today's behaviour", () => {
    expect(loadConfig({}).http.trustProxy).to.deep.equal(['loopback']);
  });

  it('reads off, a hop count, and comma lists of addresses, CIDRs and keywords', () => {
    expect(parseTrustProxy('off')).to.equal(false);
    expect(parseTrustProxy('0')).to.equal(false);
    expect(parseTrustProxy('2')).to.equal(2);
    expect(parseTrustProxy(' loopback, 10.0.0.0/8 ,fd00::/8,192.0.2.7, uniquelocal,linklocal,::1 ')).to.deep.equal([
      'loopback',
      '10.0.0.0/8',
      'fd00::/8',
      '192.0.2.7',
      'uniquelocal',
      'linklocal',
      '::1',
    ]);
    expect(loadConfig({ TRUST_PROXY: '1' }).http.trustProxy).to.equal(1);
  });

  it('refuses trusting everybody, malformed entries and out-of-range prefixes, naming the variable', () => {
    for (const bad of ['true', 'all', '*', '', '10.0.0.0/33', 'fd00::/129', 'example.com', '10.0.0.0/8/1', '999.0.0.1', '33']) {
      expect(() => loadConfig({ TRUST_PROXY: bad }), bad).to.throw(ConfigError, /TRUST_PROXY/);
    }
  });

  it('gives values Express accepts as its trust proxy setting', () => {
    for (const value of ['off', '3', 'loopback,10.0.0.0/8,fd00::/8,uniquelocal']) {
      const app = express();
      expect(() => app.set('trust proxy', parseTrustProxy(value)), value).not.to.throw();
    }
  });
});
