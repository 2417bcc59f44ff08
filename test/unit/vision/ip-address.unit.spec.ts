import { expect } from 'chai';
import { blockedAddressReason, isIpLiteral, parseIPv4, parseIPv6 } from '../../../services/platform/ip-address.ts';

describe('IP address classification (unit)', () => {
  it('parses IPv4 and IPv6 text, including :: and a dotted tail', () => {
    expect(parseIPv4('10.1.2.3')).to.equal(0x0a010203);
    expect(parseIPv4('255.255.255.255')).to.equal(0xffffffff);
    expect(parseIPv6('::1')).to.deep.equal([0, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6('fe80::')).to.deep.equal([0xfe80, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6('2001:db8:0:1:2:3:4:5')).to.deep.equal([0x2001, 0xdb8, 0, 1, 2, 3, 4, 5]);
    expect(parseIPv6('::ffff:169.254.169.254')).to.deep.equal([0, 0, 0, 0, 0, 0xffff, 0xa9fe, 0xa9fe]);
    expect(parseIPv6('64:ff9b::10.0.0.1')).to.deep.equal([0x64, 0xff9b, 0, 0, 0, 0, 0x0a00, 0x0001]);
    expect(() => parseIPv4('10.0.0')).to.throw(TypeError);
    expect(() => parseIPv6('1:::2')).to.throw(TypeError);
  });

  const blocked: Array<[string, RegExp]> = [
    ['127.0.0.1', /loopback/],
    ['127.255.255.254', /loopback/],
    ['10.255.255.1', /private/],
    ['172.16.0.1', /private/],
    ['172.31.255.255', /private/],
    ['192.168.1.1', /private/],
    ['169.254.169.254', /link-local.*metadata/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['100.127.255.255', /carrier-grade NAT/],
    ['100.100.100.200', /carrier-grade NAT/], // Alibaba Cloud metadata
    ['0.0.0.0', /unspecified/],
    ['0.1.2.3', /unspecified/],
    ['224.0.0.1', /multicast/],
    ['239.255.255.250', /multicast/],
    ['255.255.255.255', /broadcast/],
    ['240.0.0.1', /reserved/],
    ['192.0.0.192', /reserved/], // Oracle Cloud metadata
    ['198.18.0.1', /benchmarking/],
    ['192.0.2.1', /documentation/],
    ['::', /unspecified/],
    ['::1', /loopback/],
    ['[::1]', /loopback/],
    ['fc00::1', /unique local/],
    ['fd00:ec2::254', /unique local/], // AWS metadata over IPv6
    ['fe80::1', /link-local/],
    ['febf:ffff::1', /link-local/],
    ['fec0::1', /site-local/],
    ['ff02::1', /multicast/],
    ['::ffff:127.0.0.1', /IPv4-mapped loopback/],
    ['::ffff:7f00:1', /IPv4-mapped loopback/],
    ['::ffff:169.254.169.254', /IPv4-mapped link-local/],
    ['::ffff:a00:1', /IPv4-mapped private/],
    ['::ffff:0.0.0.0', /IPv4-mapped unspecified/],
    ['64:ff9b::a9fe:a9fe', /NAT64 link-local/],
    ['2002:a9fe:a9fe::1', /6to4 link-local/],
    ['2002:7f00:1::', /6to4 loopback/],
    ['::127.0.0.1', /reserved/], // IPv4-compatible (deprecated)
    ['2001::1', /Teredo/],
    ['2001:db8::1', /documentation/],
    ['100::1', /reserved/],
    ['fe80::1%eth0', /zone/],
    ['example.com', /not an IP/],
  ];
  for (const [address, reason] of blocked) {
    it(`refuses ${address}`, () => {
      expect(blockedAddressReason(address)).to.match(reason);
    });
  }

  const allowed = [
    '8.8.8.8',
    '1.1.1.1',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '169.253.0.1',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '[2a00:1450::1]',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ];
  for (const address of allowed) {
    it(`allows public ${address}`, () => {
      expect(blockedAddressReason(address)).to.equal(undefined);
    });
  }

  it('tells IP literals from names', () => {
    expect(isIpLiteral('10.0.0.1')).to.equal(true);
    expect(isIpLiteral('[::1]')).to.equal(true);
    expect(isIpLiteral('::ffff:10.0.0.1')).to.equal(true);
    expect(isIpLiteral('10.0.0.1.example.com')).to.equal(false);
    expect(isIpLiteral('localhost')).to.equal(false);
  });
});
