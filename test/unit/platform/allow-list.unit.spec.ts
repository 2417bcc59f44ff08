import { expect } from 'chai';
import { isAllowListed, parseAllowList } from '../../../services/platform/allow-list.ts';

describe('capture allow-list (unit)', () => {
  it('parses host, host:port and bracketed IPv6, lower-cased', () => {
    expect(parseAllowList(' 127.0.0.1:8080, Example.COM ,[::1]:3000,[fd00::1], staging.local. ')).to.deep.equal([
      { host: '127.0.0.1', port: 8080 },
      { host: 'example.com' },
      { host: '::1', port: 3000 },
      { host: 'fd00::1' },
      { host: 'staging.local' },
    ]);
    expect(parseAllowList(undefined)).to.deep.equal([]);
    expect(parseAllowList('')).to.deep.equal([]);
  });

  it('refuses malformed entries with the entry named', () => {
    expect(() => parseAllowList('host:99999')).to.throw(/"host:99999"/);
    expect(() => parseAllowList('::1')).to.throw(TypeError);
    expect(() => parseAllowList('a:b:c')).to.throw(TypeError);
  });

  it('matches a host in any spelling, on its port only when one is given', () => {
    const allow = parseAllowList('127.0.0.1:8080,Staging.Test,[::1]:3000');
    expect(isAllowListed(allow, '127.0.0.1', 8080)).to.equal(true);
    expect(isAllowListed(allow, '127.0.0.1', 8081)).to.equal(false);
    expect(isAllowListed(allow, 'staging.test.', 1234)).to.equal(true);
    expect(isAllowListed(allow, '[::1]', 3000)).to.equal(true);
    expect(isAllowListed(allow, 'example.com', 80)).to.equal(false);
  });
});
