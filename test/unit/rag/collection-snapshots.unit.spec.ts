import { expect } from 'chai';
import { CollectionSnapshots, type CollectionSnapshot } from '../../../services/rag/index-store/pg/collection-snapshots.ts';
import { MemoryBm25, packPostings } from '../../../services/rag/index-store/memory-bm25.ts';
import { NameIndex } from '../../../services/rag/index-store/name-index.ts';
import { VectorMatrix } from '../../../services/rag/index-store/vector-matrix.ts';

/** A snapshot of `rows` 4-float vectors (16 bytes a row). */
function snapshot(rows: number): CollectionSnapshot {
  const data = new Float32Array(rows * 4).fill(0.5);
  const matrix = new VectorMatrix(
    4,
    data,
    Int32Array.from({ length: rows }, (_, i) => i),
    Array.from({ length: rows }, (_, i) => `f${i}.ts`),
    new Int32Array(rows),
  );
  return {
    matrix,
    ids: Array.from({ length: rows }, (_, i) => 1000 + i),
    names: new NameIndex([]),
    bm25: new MemoryBm25(packPostings(new Map()), new Int32Array(0), 0, 0),
  };
}

describe('rag CollectionSnapshots: collections (vectors, names, postings) held in memory by generation (unit)', () => {
  it('gives a snapshot back only for the generation it was taken at, and drops it for any other', () => {
    const held = new CollectionSnapshots(16 * 800);
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

  it('holds no collection over an eighth of the budget, and drops the least recently used beyond it', () => {
    const held = new CollectionSnapshots(16 * 800);
    expect(held.fits(100, 4)).to.equal(true);
    expect(held.fits(101, 4)).to.equal(false);
    held.set('big', 1, snapshot(101));
    expect(held.get('big', 1)).to.equal(undefined);
    const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    for (const id of ids) held.set(id, 1, snapshot(100));
    expect(held.bytes).to.equal(16 * 800);
    held.get('a', 1); // a is now the most recently used
    held.set('i', 1, snapshot(100));
    expect(held.get('b', 1)).to.equal(undefined);
    for (const id of ['a', 'c', 'd', 'e', 'f', 'g', 'h', 'i']) expect(held.get(id, 1), id).to.not.equal(undefined);
    expect(held.bytes).to.equal(16 * 800);
    held.drop('a');
    expect(held.bytes).to.equal(16 * 700);
  });

  it('lets one load run at a time, and a collection load again only after ten times its last load (at least minReloadMs)', () => {
    const held = new CollectionSnapshots(16 * 800, { minReloadMs: 1000 });
    expect(held.startLoad('a', 0)).to.equal(true);
    expect(held.startLoad('b', 0)).to.equal(false);
    held.endLoad(50); // took 50 ms: a waits until 1050
    expect(held.startLoad('a', 1049)).to.equal(false);
    expect(held.startLoad('b', 1049)).to.equal(true);
    held.endLoad(1349); // took 300 ms: b waits 3 s
    expect(held.startLoad('a', 1050)).to.equal(true);
    held.endLoad(1050);
    expect(held.startLoad('b', 4348)).to.equal(false);
    expect(held.startLoad('b', 4349)).to.equal(true);
    held.endLoad(4349);
  });

  it('refuses a budget that is not a number of bytes', () => {
    expect(() => new CollectionSnapshots(-1)).to.throw(RangeError);
    expect(() => new CollectionSnapshots(Number.NaN)).to.throw(RangeError);
  });
});
