import { expect } from 'chai';
import { FairQueue } from '../../../services/platform/work/fair-queue.ts';

describe('FairQueue', () => {
  it('serves tenants round-robin, whatever one of them has waiting', () => {
    const q = new FairQueue<string>(100);
    for (let i = 0; i < 5; i++) q.push('a', `a${i}`);
    q.push('b', 'b0');
    q.push('b', 'b1');
    q.push('c', 'c0');
    const order: string[] = [];
    for (let item = q.shift(); item !== undefined; item = q.shift()) order.push(item);
    expect(order).to.deep.equal(['a0', 'b0', 'c0', 'a1', 'b1', 'a2', 'a3', 'a4']);
  });

  it('refuses past the bound of one tenant, not of the others', () => {
    const q = new FairQueue<number>(2);
    expect(q.push('a', 1)).to.equal(true);
    expect(q.push('a', 2)).to.equal(true);
    expect(q.push('a', 3)).to.equal(false);
    expect(q.push('b', 4)).to.equal(true);
    expect(q.size).to.equal(3);
  });

  it('skips a tenant that may not take more now and serves it later', () => {
    const q = new FairQueue<string>(10);
    q.push('a', 'a0');
    q.push('b', 'b0');
    expect(q.shift((t) => t === 'a')).to.equal('b0');
    expect(q.shift((t) => t === 'a')).to.equal(undefined);
    expect(q.shift()).to.equal('a0');
  });

  it('removes an item that gave up waiting and drains the rest', () => {
    const q = new FairQueue<string>(10);
    q.push('a', 'x');
    q.push('a', 'y');
    q.push('b', 'z');
    expect(q.remove('a', 'x')).to.equal(true);
    expect(q.remove('a', 'x')).to.equal(false);
    expect(q.drain().sort()).to.deep.equal(['y', 'z']);
    expect(q.size).to.equal(0);
  });
});
