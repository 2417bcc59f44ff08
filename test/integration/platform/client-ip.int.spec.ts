import { expect } from 'chai';
import express from 'express';
import { clientIp } from '../../../services/platform/http/client-ip.ts';
import { listen } from '../../../services/platform/service.ts';

describe('clientIp: req.ip remembered per socket address and X-Forwarded-For (integration, local HTTP)', () => {
  it("gives what Express's req.ip gives, for each app's trust setting, on first and repeated requests", async () => {
    const servers = await Promise.all(
      (['loopback', false, 2] as const).map(async (trust) => {
        const app = express();
        app.set('trust proxy', trust);
        app.get('/ip', (req, res) => res.json({ ours: clientIp(req), express: req.ip }));
        return listen(app, '127.0.0.1', 0);
      }),
    );
    try {
      const chains = [
        undefined,
        '203.0.113.9',
        '203.0.113.9, 127.0.0.1',
        '198.51.100.1, 203.0.113.9',
        '::1',
        '2001:db8::1, ::ffff:127.0.0.1',
        'not an address',
      ];
      for (const server of servers) {
        for (const chain of [...chains, ...chains]) {
          const res = await fetch(`${server.url}/ip`, { headers: chain === undefined ? {} : { 'x-forwarded-for': chain } });
          const { ours, express: expected } = (await res.json()) as { ours: string; express: string };
          expect(ours, `${server.url} X-Forwarded-For: ${chain}`).to.equal(expected);
        }
      }
    } finally {
      await Promise.all(servers.map((s) => s.close()));
    }
  });
});
