import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';

interface Probe {
  survivedMb: number;
  grewBeforeNextMb: number | null;
}

/** A fresh process per setting: V8's heap flags are per process, and this one's heap is mocha's. */
async function probe(setting: string): Promise<Probe> {
  const script = join(import.meta.dirname, '..', '..', 'support', 'heap-growth-probe.ts');
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', script, setting]);
  return JSON.parse(stdout.trim()) as Probe;
}

describe('setHeapGrowth: the headroom after a memory-reducing collection (integration, child processes)', () => {
  it('lets the old generation grow by about the percent set before the next full collection', async function () {
    this.timeout(60_000);
    const own = await probe('v8');
    const doubled = await probe('100');
    const quadrupled = await probe('300');
    // V8 alone, after a collection that reduced memory: a full collection before the heap has grown by
    // twice what survived (measured: 38-113 % of it).
    expect(own.grewBeforeNextMb, 'V8 alone')
      .to.be.a('number')
      .below(own.survivedMb * 2);
    // 100 %: about what survived (measured: 94-153 %).
    expect(doubled.grewBeforeNextMb, '100 %')
      .to.be.a('number')
      .within(doubled.survivedMb * 0.75, doubled.survivedMb * 2);
    // 300 %: at least twice what survived, or none within what the probe adds (null).
    expect(quadrupled.grewBeforeNextMb ?? Number.POSITIVE_INFINITY, '300 %').to.be.at.least(quadrupled.survivedMb * 2);
  });

  it('gives the choice back to V8 with 0, after another setting', async function () {
    this.timeout(60_000);
    const reset = await probe('300,0');
    expect(reset.grewBeforeNextMb, '300 %, then 0')
      .to.be.a('number')
      .below(reset.survivedMb * 2);
  });
});
