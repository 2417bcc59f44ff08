import { expect } from 'chai';
import { cosine, l2Normalize, pool } from '../../../services/rag/embedding/pooling.ts';

describe('rag embedding: pooling (unit)', () => {
  // 2 texts, 3 positions, 2 dimensions; the second text has one real token and two of padding.
  const states = { data: Float32Array.from([1, 2, 3, 4, 5, 6, 10, 20, 99, 99, 99, 99]), dims: [2, 3, 2] };

  it('mean pools over the real tokens only', () => {
    const [a, b] = pool(states, [3, 1], 'mean');
    expect(Array.from(a ?? [])).to.deep.equal([3, 4]);
    expect(Array.from(b ?? [])).to.deep.equal([10, 20]);
  });

  it('takes the first token for cls', () => {
    const [a, b] = pool(states, [3, 1], 'cls');
    expect(Array.from(a ?? [])).to.deep.equal([1, 2]);
    expect(Array.from(b ?? [])).to.deep.equal([10, 20]);
  });

  it('passes [batch, dimensions] outputs through for none', () => {
    const [a, b] = pool({ data: Float32Array.from([1, 2, 3, 4]), dims: [2, 2] }, [5, 7], 'none');
    expect(Array.from(a ?? [])).to.deep.equal([1, 2]);
    expect(Array.from(b ?? [])).to.deep.equal([3, 4]);
  });

  it('refuses an output of the wrong shape for the pooling', () => {
    expect(() => pool(states, [3, 1], 'none')).to.throw(/\[batch, dimensions\], got \[2, 3, 2\]/);
    expect(() => pool({ data: new Float32Array(4), dims: [2, 2] }, [1, 1], 'mean')).to.throw(/\[batch, sequence, dimensions\]/);
    expect(() => pool(states, [3], 'mean')).to.throw(/shape/);
  });

  it('normalises to unit length and leaves a zero vector at zero', () => {
    expect(Array.from(l2Normalize(Float32Array.from([3, 4])))).to.deep.equal([0.6000000238418579, 0.800000011920929]);
    expect(Array.from(l2Normalize(new Float32Array(3)))).to.deep.equal([0, 0, 0]);
  });

  it('computes cosine similarity', () => {
    expect(cosine(Float32Array.from([1, 0]), Float32Array.from([0, 2]))).to.equal(0);
    expect(cosine(Float32Array.from([1, 1]), Float32Array.from([2, 2]))).to.be.closeTo(1, 1e-9);
    expect(() => cosine(new Float32Array(2), new Float32Array(3))).to.throw(/different lengths/);
  });
});
