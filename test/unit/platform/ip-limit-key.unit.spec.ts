import { expect } from 'chai';
import { ipLimitKey } from '../../../services/platform/http/client-ip.ts';

describe('ipLimitKey: the bucket a per-client limit counts an address in (unit)', () => {
  it('counts IPv4 addresses as they are', () => {
    expect(ipLimitKey('203.0.113.5')).to.equal('203.0.113.5');
  });

  it('counts an IPv4-mapped IPv6 address as its IPv4 address, dotted or hex', () => {
    expect(ipLimitKey('::ffff:203.0.113.5')).to.equal('203.0.113.5');
    expect(ipLimitKey('::FFFF:cb00:7105')).to.equal('203.0.113.5');
    expect(ipLimitKey('0:0:0:0:0:ffff:127.0.0.1')).to.equal('127.0.0.1');
  });

  it('counts IPv6 addresses per /64, whatever their spelling', () => {
    const key = '2001:db8:15:1::/64';
    for (const ip of [
      '2001:db8:15:1::1',
      '2001:0db8:0015:0001:ffff:ffff:ffff:ffff',
      '2001:DB8:15:1:a:b:c:d',
      '2001:db8:15:1::1%eth0',
      '2001:db8:15:1::192.0.2.1',
    ]) {
      expect(ipLimitKey(ip), ip).to.equal(key);
    }
    expect(ipLimitKey('2001:db8:15:2::1')).to.equal('2001:db8:15:2::/64');
    expect(ipLimitKey('::1')).to.equal('0:0:0:0::/64');
    expect(ipLimitKey('fe80::1')).to.equal('fe80:0:0:0::/64');
    expect(ipLimitKey('2001:db8::')).to.equal('2001:db8:0:0::/64');
  });

  it('leaves what is not an address alone', () => {
    for (const odd of ['unknown', '1:2:3', '1::2::3', 'zz::1', '1:2:3:4:5:6:7:8:9']) expect(ipLimitKey(odd), odd).to.equal(odd);
  });
});
