import { expect } from 'chai';
import { createDotKernel } from '../../../services/rag/index-store/simd-dot.ts';
import { TopK } from '../../../services/rag/index-store/top-k.ts';
import { VectorMatrix } from '../../../services/rag/index-store/vector-matrix.ts';

/** Deterministic pseudo-random numbers in [-0.5, 0.5). */
function generator(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648 - 0.5;
  };
}

function unitRows(rows: number, dims: number, seed: number): Float32Array {
  const random = generator(seed);
  const data = new Float32Array(rows * dims);
  for (let r = 0; r < rows; r++) {
    let norm = 0;
    for (let j = 0; j < dims; j++) norm += (data[r * dims + j] = random()) ** 2;
    for (let j = 0; j < dims; j++) data[r * dims + j] = (data[r * dims + j] as number) / Math.sqrt(norm);
  }
  return data;
}

function matrix(data: Float32Array, dims: number): VectorMatrix {
  const rows = data.length / dims;
  return new VectorMatrix(
    dims,
    data,
    Int32Array.from({ length: rows }, (_, i) => 100 + i),
    Array.from({ length: rows }, (_, i) => `f${i}`),
    new Int32Array(rows),
  );
}

describe('rag index store: exact vector search (unit)', () => {
  it('keeps the k best scores, best first, ties to the lower index', () => {
    const top = new TopK(3);
    for (const [score, index] of [
      [0.1, 0],
      [0.9, 1],
      [0.5, 2],
      [0.9, 3],
      [0.2, 4],
      [0.5, 5],
      [0.95, 6],
    ] as const)
      top.push(score, index);
    expect(top.sorted()).to.deep.equal([
      { index: 6, score: 0.95 },
      { index: 1, score: 0.9 },
      { index: 3, score: 0.9 },
    ]);
    const ties = new TopK(2);
    for (const index of [4, 2, 9, 1]) ties.push(0.5, index);
    expect(ties.sorted().map((t) => t.index)).to.deep.equal([1, 2]);
    expect(new TopK(0).sorted()).to.deep.equal([]);
  });

  it('the WebAssembly SIMD dot products agree with plain arithmetic', () => {
    const dims = 384;
    const rows = 37;
    const kernel = createDotKernel(rows, dims);
    if (!kernel) {
      console.warn('    no WebAssembly SIMD here: the JavaScript loop is used');
      return;
    }
    const data = unitRows(rows, dims, 7);
    const query = unitRows(1, dims, 8);
    kernel.data.set(data);
    kernel.query.set(query);
    kernel.run();
    for (let r = 0; r < rows; r++) {
      let expected = 0;
      for (let j = 0; j < dims; j++) expected += (query[j] as number) * (data[r * dims + j] as number);
      expect(kernel.scores[r]).to.be.closeTo(expected, 1e-5);
    }
    expect(createDotKernel(3, 10)).to.equal(undefined); // dims not a multiple of 8
  });

  it('finds the exact nearest rows, as a brute-force sort does', () => {
    const dims = 384;
    const data = unitRows(500, dims, 1);
    const m = matrix(data, dims);
    const query = data.slice(42 * dims, 43 * dims);
    const found = m.nearest(query, 5);
    expect(found[0]?.row).to.equal(42);
    expect(found[0]?.score).to.be.closeTo(1, 1e-5);
    const brute = Array.from({ length: 500 }, (_, r) => {
      let s = 0;
      for (let j = 0; j < dims; j++) s += (query[j] as number) * (data[r * dims + j] as number);
      return { row: r, score: s };
    }).sort((a, b) => b.score - a.score);
    expect(found.map((f) => f.row)).to.deep.equal(brute.slice(0, 5).map((b) => b.row));
    expect(m.rowIds[42]).to.equal(142);
  });

  it('works for dimensions the SIMD kernel does not take, and refuses a wrong query size', () => {
    const data = unitRows(20, 6, 3);
    const m = matrix(data, 6);
    expect(m.nearest(data.slice(6, 12), 1)[0]?.row).to.equal(1);
    expect(() => m.nearest(new Float32Array(5), 1)).to.throw(RangeError);
    expect(matrix(new Float32Array(0), 6).nearest(new Float32Array(6), 3)).to.deep.equal([]);
  });
});
