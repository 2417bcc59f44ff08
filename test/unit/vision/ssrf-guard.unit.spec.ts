import { expect } from 'chai';
import { parseAllowList } from '../../../services/platform/allow-list.ts';
import {
  hostReason,
  judgeAddresses,
  SsrfGuard,
  targetKey,
  urlTarget,
  type Lookup,
  type ResolvedAddress,
} from '../../../services/vision/browser/ssrf-guard.ts';

const a4 = (address: string): ResolvedAddress => ({ address, family: 4 });
const a6 = (address: string): ResolvedAddress => ({ address, family: 6 });

/** A DNS of the test's own, which counts its questions and can change its answers (rebinding). */
function fakeDns(answers: Record<string, ReadonlyArray<readonly ResolvedAddress[]>>): Lookup & { asked: string[] } {
  const asked: string[] = [];
  const lookup = async (host: string) => {
    const forHost = answers[host];
    if (forHost === undefined) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    const n = asked.filter((h) => h === host).length;
    asked.push(host);
    return forHost[Math.min(n, forHost.length - 1)] ?? [];
  };
  return Object.assign(lookup, { asked });
}

describe('SSRF guard (unit)', () => {
  describe('URLs', () => {
    it('takes http(s) and ws(s) with their default ports', () => {
      expect(urlTarget('https://Example.com/x')).to.deep.equal({ host: 'example.com', port: 443 });
      expect(urlTarget('http://example.com:8080/')).to.deep.equal({ host: 'example.com', port: 8080 });
      expect(urlTarget('wss://example.com/')).to.deep.equal({ host: 'example.com', port: 443 });
      expect(urlTarget('http://[::1]:81/')).to.deep.equal({ host: '::1', port: 81 });
    });

    it('refuses other schemes and junk', () => {
      for (const url of [
        'file:///etc/passwd',
        'javascript:alert(1)',
        'data:text/html,hi',
        'ftp://example.com/',
        'chrome://settings',
        'gopher://x/',
        'about:blank',
      ]) {
        expect(urlTarget(url), url)
          .to.have.property('reason')
          .that.matches(/scheme .* is not allowed/);
      }
      expect(urlTarget('not a url')).to.deep.equal({ reason: 'not a valid URL' });
      expect(urlTarget('ws://example.com/', ['http:', 'https:'])).to.have.property('reason');
    });

    it('sees the address behind the spellings the URL parser normalises', () => {
      // Decimal, hex, octal and short forms of 127.0.0.1, and an IPv4-mapped IPv6 literal.
      for (const url of [
        'http://2130706433/',
        'http://0x7f.1/',
        'http://0177.0.0.1/',
        'http://127.1/',
        'http://[::ffff:127.0.0.1]/',
        'http://LOCALHOST./',
      ]) {
        const target = urlTarget(url);
        if ('reason' in target) throw new Error(`${url}: ${target.reason}`);
        expect(hostReason([], target.host, target.port), url).to.match(/loopback|internal/);
      }
    });
  });

  describe('host names', () => {
    it('refuses internal names and literals without DNS', () => {
      for (const host of [
        'localhost',
        'api.localhost',
        'metadata.google.internal',
        'metadata',
        'anything.internal',
        'printer.local',
        '169.254.169.254',
        '::1',
        '0.0.0.0',
      ]) {
        expect(hostReason([], host, 80), host).to.be.a('string');
      }
      expect(hostReason([], 'example.com', 80)).to.equal(undefined);
      expect(hostReason([], '93.184.216.34', 80)).to.equal(undefined);
    });

    it('lets allow-listed hosts through, on their port only when one is given', () => {
      const allow = parseAllowList('127.0.0.1:8080,localhost');
      expect(hostReason(allow, '127.0.0.1', 8080)).to.equal(undefined);
      expect(hostReason(allow, '127.0.0.1', 8081)).to.match(/loopback/);
      expect(hostReason(allow, 'localhost', 1234)).to.equal(undefined);
    });
  });

  describe('resolved addresses', () => {
    const target = { host: 'example.com', port: 443 };

    it('refuses when ANY address is not public', () => {
      expect(judgeAddresses([], target, [a4('93.184.216.34'), a4('10.0.0.1')])).to.deep.include({ allowed: false });
      expect(judgeAddresses([], target, [a6('2606:2800::1'), a6('::ffff:169.254.169.254')])).to.deep.equal({
        allowed: false,
        reason: 'host example.com is not allowed: it resolves to a private or internal address',
      });
      expect(judgeAddresses([], target, []))
        .to.have.property('reason')
        .that.matches(/did not resolve/);
    });

    it('allows public answers and keeps them for the connection', () => {
      expect(judgeAddresses([], target, [a4('93.184.216.34'), a6('2606:2800::1')])).to.deep.equal({
        allowed: true,
        addresses: [a4('93.184.216.34'), a6('2606:2800::1')],
      });
    });

    it('tolerates an address that is itself allow-listed (the literal would be allowed anyway)', () => {
      const allow = parseAllowList('127.0.0.1:8080');
      expect(judgeAddresses(allow, { host: 'app.test', port: 8080 }, [a4('127.0.0.1')])).to.deep.include({ allowed: true });
      expect(judgeAddresses(allow, { host: 'app.test', port: 9090 }, [a4('127.0.0.1')])).to.deep.include({ allowed: false });
    });
  });

  describe('SsrfGuard', () => {
    it('resolves each host once per guard, so a rebinding DNS never gets its second question', async () => {
      const dns = fakeDns({ 'rebind.test': [[a4('93.184.216.34')], [a4('169.254.169.254')]] });
      const guard = new SsrfGuard({ allowList: [], lookup: dns });
      const first = await guard.checkUrl('http://rebind.test/a');
      const second = await guard.checkTarget({ host: 'rebind.test', port: 80 });
      const third = await guard.checkUrl('https://REBIND.test./b');
      for (const verdict of [first, second, third]) expect(verdict).to.deep.equal({ allowed: true, addresses: [a4('93.184.216.34')] });
      expect(dns.asked).to.deep.equal(['rebind.test']);
      // A new capture (a new guard) asks again, and is refused.
      expect(await new SsrfGuard({ allowList: [], lookup: dns }).checkUrl('http://rebind.test/')).to.deep.include({ allowed: false });
    });

    it('shares one lookup between concurrent checks of a host', async () => {
      const dns = fakeDns({ 'a.test': [[a4('93.184.216.34')]] });
      const guard = new SsrfGuard({ allowList: [], lookup: dns });
      await Promise.all([guard.checkUrl('http://a.test/1'), guard.checkUrl('http://a.test/2'), guard.checkUrl('https://a.test/3')]);
      expect(dns.asked).to.have.length(1);
    });

    it('refuses names that resolve to private addresses, and names that do not resolve', async () => {
      const dns = fakeDns({ 'intranet.test': [[a4('10.1.2.3')]] });
      const guard = new SsrfGuard({ allowList: [], lookup: dns });
      // The refusal reaches the customer: it says why without naming the internal address or its range.
      const refused = await guard.checkUrl('http://intranet.test/');
      expect(refused).to.deep.equal({
        allowed: false,
        reason: 'host intranet.test is not allowed: it resolves to a private or internal address',
      });
      expect(JSON.stringify(refused)).to.not.match(/10\.1\.2\.3|10\/8/);
      expect(await guard.checkUrl('http://missing.test/'))
        .to.have.property('reason')
        .that.matches(/ENOTFOUND/);
    });

    it('never asks DNS about literals, internal names or other schemes', async () => {
      const dns = fakeDns({});
      const guard = new SsrfGuard({ allowList: [], lookup: dns });
      expect(await guard.checkUrl('http://169.254.169.254/latest/meta-data/')).to.deep.include({ allowed: false });
      expect(await guard.checkUrl('http://metadata.google.internal/')).to.deep.include({ allowed: false });
      expect(await guard.checkUrl('file:///etc/passwd')).to.deep.include({ allowed: false });
      expect(await guard.checkUrl('http://93.184.216.34/')).to.deep.equal({ allowed: true, addresses: [a4('93.184.216.34')] });
      expect(dns.asked).to.deep.equal([]);
    });

    it('gives up on a DNS that does not answer', async () => {
      const guard = new SsrfGuard({ allowList: [], lookup: () => new Promise(() => undefined), lookupTimeoutMs: 10 });
      expect(await guard.checkUrl('http://slow.test/'))
        .to.have.property('reason')
        .that.matches(/timed out/);
    });
  });

  it('spells a connection target one way whatever the input spelling', () => {
    expect(targetKey('Example.COM.', 80)).to.equal('example.com:80');
    expect(targetKey('[::1]', 81)).to.equal(targetKey('0:0:0:0:0:0:0:1', 81));
    expect(targetKey('::ffff:169.254.169.254', 80)).to.equal('[0:0:0:0:0:ffff:a9fe:a9fe]:80');
  });
});
