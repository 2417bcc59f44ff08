import { expect } from 'chai';
import client from 'prom-client';
import { RequestLatencyHistogram } from '../../../services/platform/metrics.ts';

describe('RequestLatencyHistogram (unit)', () => {
  it("exposes exactly what prom-client's own Histogram exposes for the same observations", async () => {
    const registry = new client.Registry();
    const buckets = [0.001, 0.005, 0.01, 0.1, 1];
    const ours = new RequestLatencyHistogram({ name: 'ours_seconds', help: 'h', buckets, registry });
    const reference = new client.Histogram({
      name: 'ref_seconds',
      help: 'h',
      buckets,
      labelNames: ['service', 'method', 'route', 'status'],
      registers: [registry],
    });
    const observations: [Record<'service' | 'method' | 'route' | 'status', string>, number][] = [
      [{ service: 'keys', method: 'POST', route: '/validate', status: '200' }, 0.0004],
      [{ service: 'keys', method: 'POST', route: '/validate', status: '200' }, 0.005], // on a bound: counts in it
      [{ service: 'keys', method: 'POST', route: '/validate', status: '429' }, 0.02],
      [{ service: 'keys', method: 'GET', route: '/usage', status: '200' }, 3],
    ];
    for (const [labels, seconds] of observations) {
      ours.observe(labels, seconds);
      reference.observe(labels, seconds);
    }
    const scrape = async (name: string) =>
      (await registry.metrics())
        .split('\n')
        .filter((l) => l.includes(name))
        .map((l) => l.replace(name, 'x'))
        .sort();
    expect(await scrape('ours_seconds')).to.have.length(3 * (buckets.length + 3) + 2);
    expect(await scrape('ours_seconds')).to.deep.equal(await scrape('ref_seconds'));

    ours.reset();
    expect((await scrape('ours_seconds')).filter((l) => !l.startsWith('#'))).to.deep.equal([]);
  });
});
