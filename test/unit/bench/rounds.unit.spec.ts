import { expect } from 'chai';
import { compareRounds, comparisonLines, formatRounds, median, middleOf, roundsOf, type SavedRun } from '../../../bench/rounds.ts';

describe('bench/rounds: a figure judged over rounds (unit)', () => {
  it('takes the median and the spread of the rounds', () => {
    expect(median([3, 1, 2])).to.equal(2);
    expect(median([4, 1, 3, 2])).to.equal(2.5);
    expect(median([])).to.be.NaN;
    const r = roundsOf([1.2, 0.9, 1.4, 1.1, 1.0]);
    expect(r).to.deep.equal({ median: 1.1, min: 0.9, max: 1.4, values: [1.2, 0.9, 1.4, 1.1, 1.0] });
    expect(formatRounds(r, (x) => x.toFixed(2))).to.equal('1.10 (spread 0.90–1.40 over 5 rounds)');
  });

  it('picks the measured item of median value, the higher middle one of an even count', () => {
    const passes = [{ ms: 700 }, { ms: 500 }, { ms: 900 }];
    expect(middleOf(passes, (p) => p.ms)).to.equal(passes[0]);
    expect(middleOf([{ ms: 4 }, { ms: 1 }, { ms: 3 }, { ms: 2 }], (p) => p.ms)).to.deep.equal({ ms: 3 });
    expect(middleOf([{ ms: 8 }], (p) => p.ms)).to.deep.equal({ ms: 8 });
    expect(
      passes.map((p) => p.ms),
      'the input is left in its order',
    ).to.deep.equal([700, 500, 900]);
    expect(() => middleOf([], (x: number) => x)).to.throw('no items');
  });

  it('calls a move of the median smaller than the wider spread "no change", and a larger one better or worse', () => {
    const before = roundsOf([10, 12, 14]); // median 12, spread 4
    expect(compareRounds(before, roundsOf([13, 15, 16]), false).change, 'moved 3 < 4').to.equal('no change');
    expect(compareRounds(before, roundsOf([5, 6, 7]), false).change, 'p99 down 6').to.equal('better');
    expect(compareRounds(before, roundsOf([5, 6, 7]), true).change, 'req/s down 6').to.equal('worse');
    // The wider of the two spreads counts: a noisy new run cannot claim a change its own rounds do not show.
    expect(compareRounds(before, roundsOf([1, 6, 20]), false).change).to.equal('no change');
    expect(compareRounds(before, roundsOf([12, 12, 12]), false).change).to.equal('no change');
  });

  it('compares only the figures both runs have', () => {
    const before: SavedRun = { bench: 'validate', at: 'then', figures: { a: { ...roundsOf([1, 2, 3]), higherIsBetter: true } } };
    const lines = comparisonLines(
      before,
      { a: { ...roundsOf([5, 6, 7]), higherIsBetter: true }, b: { ...roundsOf([1]), higherIsBetter: true } },
      (x) => x.toFixed(1),
    );
    expect(lines).to.deep.equal(['a: 2.0 -> 6.0 (+4.0, spread 2.0): better']);
    const once: SavedRun = { bench: 'validate', at: 'then', figures: { a: { ...roundsOf([1]), higherIsBetter: true } } };
    expect(comparisonLines(once, { a: { ...roundsOf([5]), higherIsBetter: true } }, (x) => x.toFixed(1))).to.deep.equal([
      'a: 1.0 -> 5.0 (+4.0, spread 0.0): too few rounds to judge',
    ]);
  });
});
