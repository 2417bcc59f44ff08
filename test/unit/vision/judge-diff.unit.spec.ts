import { expect } from 'chai';
import { judgeDiff } from '../../../services/vision/app/judge-diff.ts';

describe('visual check limits (unit)', () => {
  it('passes within the ratio when no count is set', () => {
    expect(judgeDiff({ diffPixels: 100, diffRatio: 0.0005 }, { maxDiffRatio: 0.001 })).to.deep.equal({
      ok: true,
      message: '0.050 % of pixels differ (100), within 0.1 %',
    });
  });

  it('needs both limits to hold when a count is set', () => {
    expect(judgeDiff({ diffPixels: 8, diffRatio: 0.00005 }, { maxDiffRatio: 0.01, maxDiffPixels: 10 }).ok).to.equal(true);
    const overCount = judgeDiff({ diffPixels: 11, diffRatio: 0.00005 }, { maxDiffRatio: 0.01, maxDiffPixels: 10 });
    expect(overCount.ok).to.equal(false);
    expect(overCount.message).to.equal('0.005 % of pixels differ (11), over 10 pixels');
    const overBoth = judgeDiff({ diffPixels: 500, diffRatio: 0.02 }, { maxDiffRatio: 0.01, maxDiffPixels: 10 });
    expect(overBoth.message).to.equal('2.000 % of pixels differ (500), over 1 % and 10 pixels');
  });

  it('takes a limit of 0 pixels as "nothing may differ"', () => {
    expect(judgeDiff({ diffPixels: 0, diffRatio: 0 }, { maxDiffRatio: 0, maxDiffPixels: 0 }).ok).to.equal(true);
    expect(judgeDiff({ diffPixels: 1, diffRatio: 0.000001 }, { maxDiffRatio: 1, maxDiffPixels: 0 }).ok).to.equal(false);
  });
});
