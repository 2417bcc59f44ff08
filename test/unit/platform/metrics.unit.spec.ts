import { expect } from 'chai';
import client from 'prom-client';
import { BoundedCounter, collectDefaultMetrics, RequestLatencyHistogram } from '../../../services/platform/metrics.ts';

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

  it('counts through an observer of fixed labels exactly as through observe, before and after a reset', async () => {
    const registry = new client.Registry();
    const buckets = [0.001, 0.01];
    const labels = { service: 'keys', method: 'POST', route: '/validate', status: '200' };
    const viaObserve = new RequestLatencyHistogram({ name: 'by_observe_seconds', help: 'h', buckets, registry });
    const viaObserver = new RequestLatencyHistogram({ name: 'by_observer_seconds', help: 'h', buckets, registry });
    const observer = viaObserver.observerOf(labels);
    // The observer keeps its own copy: the caller's object changing later moves nothing.
    const passed = { ...labels };
    const other = viaObserver.observerOf(passed);
    passed.status = '500';
    const scrape = async (name: string) =>
      (await registry.metrics())
        .split('\n')
        .filter((l) => l.includes(name) && !l.startsWith('#'))
        .map((l) => l.replace(name, 'x'))
        .sort();
    for (const seconds of [0.0005, 0.002, 0.5]) {
      viaObserve.observe(labels, seconds);
      viaObserve.observe(labels, seconds);
      observer(seconds);
      other(seconds);
    }
    expect(await scrape('by_observer_seconds')).to.have.length(buckets.length + 3);
    expect(await scrape('by_observer_seconds')).to.deep.equal(await scrape('by_observe_seconds'));
    viaObserve.reset();
    viaObserver.reset();
    viaObserve.observe(labels, 0.002);
    observer(0.002);
    expect(await scrape('by_observer_seconds')).to.deep.equal(await scrape('by_observe_seconds'));
  });
});

describe('BoundedCounter (unit)', () => {
  it("exports every series from 0, counts like prom-client's Counter, and files a value outside its list under other", async () => {
    const registry = new client.Registry();
    const ours = new BoundedCounter({
      name: 'ours_total',
      help: 'h',
      labels: { code: ['A', 'B'], tier: ['free', 'pro'] } as const,
      registry,
    });
    const reference = new client.Counter({ name: 'ref_total', help: 'h', labelNames: ['code', 'tier'], registers: [registry] });
    const lines = async (name: string) =>
      (await registry.metrics())
        .split('\n')
        .filter((l) => l.startsWith(`${name}{`))
        .map((l) => l.replace(name, 'x'));
    // 3 x 3 series (each list and "other"), all at 0 before anything is counted.
    expect(await lines('ours_total')).to.have.length(9);
    expect((await lines('ours_total')).every((l) => l.endsWith(' 0'))).to.equal(true);

    ours.inc({ code: 'A', tier: 'pro' });
    ours.inc({ code: 'A', tier: 'pro' }, 2);
    ours.inc({ code: 'B', tier: 'free' });
    // A caller passing what its type forbids (an id, a path) cannot add a series.
    ours.inc({ code: 'cust_123' as 'A', tier: '/etc/passwd' as 'free' });
    for (const [code, tier, by] of [
      ['A', 'pro', 3],
      ['B', 'free', 1],
      ['other', 'other', 1],
    ] as const)
      reference.inc({ code, tier }, by);
    const nonZero = async (name: string) => (await lines(name)).filter((l) => !l.endsWith(' 0')).sort();
    expect(await nonZero('ours_total')).to.deep.equal(await nonZero('ref_total'));
    expect(await lines('ours_total')).to.have.length(9);
    expect(ours.value({ code: 'A', tier: 'pro' })).to.equal(3);
  });
});

describe('process metrics (unit)', () => {
  it("exports prom-client's process and Node.js metrics under the svc_ prefix, once however often asked", async () => {
    collectDefaultMetrics();
    collectDefaultMetrics();
    const text = await client.register.metrics();
    for (const name of ['svc_process_cpu_seconds_total', 'svc_process_resident_memory_bytes', 'svc_nodejs_eventloop_lag_p99_seconds']) {
      expect(text, name).to.match(new RegExp(`^${name} `, 'm'));
    }
  });
});
