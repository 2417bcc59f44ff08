import { expect } from 'chai';
import { analyseLoop, mergeLoopProfiles, sourceOfStack, type CpuProfile } from '../../../bench/loop-profile.ts';

const frame = (functionName: string, url = '') => ({ functionName, url });

/** A profile whose samples are the given leaves, each `deltaMs` after the one before. */
function profileOf(samples: readonly { node: number; deltaMs: number }[]): CpuProfile {
  const nodes = [
    { id: 1, callFrame: frame('(root)'), children: [2, 3, 4, 5] },
    { id: 2, callFrame: frame('(idle)') },
    { id: 3, callFrame: frame('(garbage collector)') },
    { id: 4, callFrame: frame('flush', 'file:///work/main/services/keys/verifications.ts'), children: [6] },
    { id: 5, callFrame: frame('parserOnIncoming', 'node:_http_server') },
    // The database client called by the flush: the flush is the source.
    { id: 6, callFrame: frame('serialize', 'file:///work/main/node_modules/bson/lib/bson.cjs') },
  ];
  let t = 0;
  const timeDeltas = samples.map((s) => {
    t += s.deltaMs * 1000;
    return s.deltaMs * 1000;
  });
  return { nodes, startTime: 0, endTime: t + 1000, samples: samples.map((s) => s.node), timeDeltas };
}

describe('bench/loop-profile: what held the event loop (unit)', () => {
  it('names a stack by the innermost frame that owns it, our code before the libraries it calls', () => {
    expect(sourceOfStack([frame('(idle)')])).to.equal('(idle)');
    expect(sourceOfStack([frame('(garbage collector)')])).to.equal('GC');
    expect(
      sourceOfStack([
        frame('serializeInto', 'file:///x/node_modules/bson/lib/bson.cjs'),
        frame('#write', 'file:///x/services/keys/verifications.ts'),
      ]),
    ).to.equal('verification counts (flush)');
    expect(sourceOfStack([frame('write', 'file:///x/node_modules/mongodb/lib/cmap/connection.js')])).to.equal('database client (mongodb)');
    expect(sourceOfStack([frame('JSON.parse'), frame('', 'file:///x/services/keys/validate-lean.ts')])).to.equal(
      'key path (lean /validate)',
    );
    expect(sourceOfStack([frame('mystery')])).to.equal('other');
  });

  it('counts only busy stretches at least longMs long as the tail, and a gap in sampling as descheduled', () => {
    const ms = 0.5;
    const profile = profileOf([
      // A 1 ms stretch of HTTP: short, not in the tail.
      { node: 5, deltaMs: ms },
      { node: 5, deltaMs: ms },
      { node: 2, deltaMs: ms },
      // A 3 ms stretch: 1.5 ms of the flush, then a sample 2 ms late (1 ms of it descheduled), then GC.
      { node: 6, deltaMs: ms },
      { node: 4, deltaMs: ms },
      { node: 4, deltaMs: ms },
      { node: 3, deltaMs: 2 },
      { node: 3, deltaMs: ms },
      { node: 2, deltaMs: ms },
    ]);
    const p = analyseLoop(profile, { longMs: 2, gapMs: 1 });
    expect(p.longStretches).to.equal(1);
    expect(p.inLongMs).to.be.closeTo(4, 1e-9);
    const row = (source: string) => p.rows.find((r) => r.source === source);
    expect(row('verification counts (flush)')?.inLongMs).to.be.closeTo(2, 1e-9);
    expect(row('descheduled (machine)')?.inLongMs).to.be.closeTo(1, 1e-9);
    expect(row('GC')?.inLongMs).to.be.closeTo(1, 1e-9);
    expect(row('HTTP server (node:http)')?.inLongMs).to.equal(0);
    expect(row('HTTP server (node:http)')?.totalMs).to.be.closeTo(1, 1e-9);
    expect(row('verification counts (flush)')?.tailShare).to.be.closeTo(0.5, 1e-9);
    expect(row('verification counts (flush)')?.longestMs).to.be.closeTo(4, 1e-9);

    // Two rounds as one table: times add up, shares are of the sum.
    const both = mergeLoopProfiles([p, p]);
    expect(both.inLongMs).to.be.closeTo(8, 1e-9);
    expect(both.rows.find((r) => r.source === 'GC')?.inLongMs).to.be.closeTo(2, 1e-9);
    expect(both.rows.find((r) => r.source === 'GC')?.tailShare).to.be.closeTo(0.25, 1e-9);
    expect(both.rows.find((r) => r.source === 'verification counts (flush)')?.longestMs).to.be.closeTo(4, 1e-9);
  });
});
