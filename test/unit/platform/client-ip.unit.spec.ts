import type { IncomingMessage } from 'node:http';
import { expect } from 'chai';
import express from 'express';
import { clientIpOutside } from '../../../services/platform/http/client-ip.ts';

/** A plain node:http request as a lean handler sees it: headers and the socket's address only. */
const request = (remoteAddress: string, forwarded?: string | string[]) =>
  ({ headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded }, socket: { remoteAddress } }) as unknown as IncomingMessage;

describe('clientIpOutside (unit)', () => {
  it("answers Express's req.ip for each socket address and X-Forwarded-For, remembered or not", () => {
    const app = express();
    app.set('trust proxy', 'loopback');
    const cases: [IncomingMessage, string][] = [
      [request('127.0.0.1', '203.0.113.7'), '203.0.113.7'],
      // The same header from a peer that is not trusted: the peer is the client.
      [request('198.51.100.2', '203.0.113.7'), '198.51.100.2'],
      [request('127.0.0.1'), '127.0.0.1'],
      [request('127.0.0.1', ''), '127.0.0.1'],
      [request('127.0.0.1', '203.0.113.9, 127.0.0.1'), '203.0.113.9'],
    ];
    for (let pass = 0; pass < 3; pass++) for (const [req, ip] of cases) expect(clientIpOutside(app, req)).to.equal(ip);
  });

  it("keeps each app's trust proxy apart, and stays right past its bound on remembered entries", () => {
    const trusting = express();
    trusting.set('trust proxy', true);
    const distrusting = express();
    distrusting.set('trust proxy', false);
    expect(clientIpOutside(trusting, request('192.0.2.1', '203.0.113.7'))).to.equal('203.0.113.7');
    expect(clientIpOutside(distrusting, request('192.0.2.1', '203.0.113.7'))).to.equal('192.0.2.1');
    for (let i = 0; i < 25_000; i++) {
      const forwarded = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
      expect(clientIpOutside(trusting, request(`192.0.2.${i % 7}`, forwarded))).to.equal(forwarded);
    }
    expect(clientIpOutside(distrusting, request('192.0.2.1', '203.0.113.7'))).to.equal('192.0.2.1');
  });
});
