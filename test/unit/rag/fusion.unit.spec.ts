import { expect } from 'chai';
import { reciprocalRankFusion } from '../../../services/rag/index-store/fusion.ts';

describe('rag index store: reciprocal rank fusion (unit)', () => {
  it('adds weight / (k + rank) over the lists, ranks from 1', () => {
    const fused = reciprocalRankFusion([{ items: ['a', 'b', 'c'] }, { items: ['c', 'a'] }], 60);
    const score = Object.fromEntries(fused.map((f) => [f.item, f.score]));
    expect(score.a).to.be.closeTo(1 / 61 + 1 / 62, 1e-12);
    expect(score.b).to.be.closeTo(1 / 62, 1e-12);
    expect(score.c).to.be.closeTo(1 / 63 + 1 / 61, 1e-12);
    expect(fused.map((f) => f.item)).to.deep.equal(['a', 'c', 'b']);
    expect(fused[0]?.ranks).to.deep.equal([1, 2]);
    expect(fused[2]?.ranks).to.deep.equal([2, undefined]);
  });

  it('rewards agreement: an item both lists hold beats the top of one list', () => {
    const fused = reciprocalRankFusion([{ items: ['x', 'both'] }, { items: ['y', 'both'] }]);
    expect(fused[0]?.item).to.equal('both');
  });

  it('weighs the lists', () => {
    const even = reciprocalRankFusion([{ items: ['lex'] }, { items: ['vec'] }]);
    expect(even.map((f) => f.item)).to.deep.equal(['lex', 'vec']); // a tie, broken by list order
    const weighted = reciprocalRankFusion([{ items: ['lex'], weight: 0.3 }, { items: ['vec'] }]);
    expect(weighted.map((f) => f.item)).to.deep.equal(['vec', 'lex']);
    expect(weighted[1]?.score).to.be.closeTo(0.3 / 61, 1e-12);
  });

  it('breaks ties by best rank, then by first appearance, so the result depends only on the lists', () => {
    // p: ranks 1 and 3; q: ranks 2 and 2 -> 1/61 + 1/63 vs 2/62: p wins by a hair, not by the tie rule
    const fused = reciprocalRankFusion([{ items: ['p', 'q'] }, { items: ['r', 'q', 'p'] }]);
    expect(fused.map((f) => f.item)).to.deep.equal(['p', 'q', 'r']);
    const tie = reciprocalRankFusion([{ items: ['m', 'n'] }, { items: ['n', 'm'] }]);
    expect(tie.map((f) => f.item)).to.deep.equal(['m', 'n']);
    expect(reciprocalRankFusion([{ items: ['m', 'n'] }, { items: ['n', 'm'] }])).to.deep.equal(tie);
  });

  it('counts an item listed twice in one list at its best rank only', () => {
    const fused = reciprocalRankFusion([{ items: ['a', 'a', 'b'] }]);
    expect(fused.find((f) => f.item === 'a')?.score).to.be.closeTo(1 / 61, 1e-12);
  });

  it('handles empty lists and refuses a negative constant', () => {
    expect(reciprocalRankFusion([])).to.deep.equal([]);
    expect(reciprocalRankFusion([{ items: [] }, { items: ['a'] }]).map((f) => f.item)).to.deep.equal(['a']);
    expect(() => reciprocalRankFusion([{ items: ['a'] }], -1)).to.throw(RangeError);
  });
});
