import { expect } from 'chai';
import { VectorSnapshots, type VectorSnapshot } from '../../../services/rag/index-store/pg/vector-snapshots.ts';
import { VectorMatrix } from '../../../services/rag/index-store/vector-matrix.ts';

/** A snapshot of `rows` 4-float vectors (16 bytes a row). */
function snapshot(rows: number): VectorSnapshot {
  const data = new Float32Array(rows * 4).fill(0.5);
  const matrix = new VectorMatrix(
    4,
    data,
    Int32Array.from({ length: rows }, (_, i) => i),
    Array.from({ length: rows }, (_, i) => `f${i}.ts`),
    new Int32Array(rows),
  );
  return { matrix, ids: Array.from({ length: rows }, (_, i) => 1000 + i) };
}

describe("rag VectorSnapshots: collections' vectors held in memory by generation (unit)", () => {
  it('gives a snapshot back only for the generation it was taken at, and drops it for any other', () => {
    const held = new VectorSnapshots(16 * 400);
    const s = snapshot(10);
    held.set('c1', 7, s);
    expect(held.get('c1', 7)).to.equal(s);
    expect(held.bytes).to.equal(160);
    expect(held.get('c1', 8)).to.equal(undefined);
    // Dropped: a search of generation 7 (an older transaction) does not find it again either.
    expect(held.get('c1', 7)).to.equal(undefined);
    expect(held.bytes).to.equal(0);
    // A collection made again starts at a new generation, which may be lower: the newest load wins.
    held.set('c1', 9, s);
    held.set('c1', 3, snapshot(5));
    expect(held.get('c1', 3)?.matrix.rows).to.equal(5);
    expect(held.bytes).to.equal(80);
  });

  it('holds no collection over a quarter of the budget, and drops the least recently used beyond it', () => {
    const held = new VectorSnapshots(16 * 400);
    expect(held.fits(100, 4)).to.equal(true);
    expect(held.fits(101, 4)).to.equal(false);
    held.set('big', 1, snapshot(101));
    expect(held.get('big', 1)).to.equal(undefined);
    for (const id of ['a', 'b', 'c', 'd']) held.set(id, 1, snapshot(100));
    expect(held.bytes).to.equal(16 * 400);
    held.get('a', 1); // a is now the most recently used
    held.set('e', 1, snapshot(100));
    expect(held.get('b', 1)).to.equal(undefined);
    for (const id of ['a', 'c', 'd', 'e']) expect(held.get(id, 1), id).to.not.equal(undefined);
    expect(held.bytes).to.equal(16 * 400);
    held.drop('a');
    expect(held.bytes).to.equal(16 * 300);
  });

  it('lets one load run at a time, and a collection load once per reloadMs', () => {
    const held = new VectorSnapshots(16 * 400, { reloadMs: 1000 });
    expect(held.startLoad('a', 0)).to.equal(true);
    expect(held.startLoad('b', 0)).to.equal(false);
    held.endLoad();
    expect(held.startLoad('a', 999)).to.equal(false);
    expect(held.startLoad('b', 999)).to.equal(true);
    held.endLoad();
    expect(held.startLoad('a', 1000)).to.equal(true);
    held.endLoad();
  });

  it('refuses a budget that is not a number of bytes', () => {
    expect(() => new VectorSnapshots(-1)).to.throw(RangeError);
    expect(() => new VectorSnapshots(Number.NaN)).to.throw(RangeError);
  });
});
