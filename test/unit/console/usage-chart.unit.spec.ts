import { expect } from 'chai';
import { chartGeometry, chartSvg, daysOf, niceCeiling } from '../../../services/console/usage-chart.ts';

describe('console usage chart (unit)', () => {
  it('lists every UTC day from the start of the period through today', () => {
    expect(daysOf(new Date('2026-11-01T00:00:00Z'), new Date('2026-11-03T23:59:00Z'))).to.deep.equal([
      '2026-11-01',
      '2026-11-02',
      '2026-11-03',
    ]);
    expect(daysOf(new Date('2026-11-01T00:00:00Z'), new Date('2026-11-01T00:00:00Z'))).to.deep.equal(['2026-11-01']);
    expect(daysOf(new Date('2026-12-01T00:00:00Z'), new Date('2026-11-30T00:00:00Z'))).to.deep.equal([]);
  });

  it('rounds the top of the scale up to 1, 2 or 5 times a power of ten', () => {
    expect([0, 1, 2, 3, 7, 10, 11, 42, 99, 101, 4999].map(niceCeiling)).to.deep.equal([1, 1, 2, 5, 10, 10, 20, 50, 100, 200, 5000]);
  });

  it('draws one bar per day, heights proportional to the counts, on a shared baseline', () => {
    const days = ['2026-11-01', '2026-11-02', '2026-11-03', '2026-11-04'];
    const g = chartGeometry(days, [
      { day: '2026-11-02', count: 10 },
      { day: '2026-11-04', count: 5 },
    ]);
    expect(g.top).to.equal(10);
    expect(g.bars.map((b) => b.count)).to.deep.equal([0, 10, 0, 5]);
    const plot = g.height - 20;
    expect(g.bars[1]!.height).to.equal(plot);
    expect(g.bars[3]!.height).to.equal(plot / 2);
    expect(g.bars[0]!.height).to.equal(0);
    for (const b of g.bars) expect(b.y + b.height).to.equal(plot);
    // Left to right, not overlapping, inside the drawing.
    for (let i = 1; i < g.bars.length; i++) expect(g.bars[i]!.x).to.be.greaterThan(g.bars[i - 1]!.x + g.bars[i - 1]!.width);
    expect(g.bars.at(-1)!.x + g.bars.at(-1)!.width).to.be.at.most(g.width);
  });

  it('moves when a day gains a count, and names itself for assistive technology', () => {
    const days = ['2026-11-01', '2026-11-02'];
    const before = chartGeometry(days, [{ day: '2026-11-01', count: 4 }]);
    const after = chartGeometry(days, [
      { day: '2026-11-01', count: 4 },
      { day: '2026-11-02', count: 1 },
    ]);
    expect(after.bars[1]!.height).to.be.greaterThan(before.bars[1]!.height);
    const svg = chartSvg(after, 'Requests per day');
    expect(svg).to.include('role="img"').and.include('aria-label="Requests per day"');
    expect(svg.match(/<rect /g)).to.have.length(2);
    expect(svg).to.include('data-day="2026-11-02" data-count="1"');
    expect(svg).not.to.include('style=');
  });

  it('draws an empty period without dividing by zero', () => {
    const g = chartGeometry([], []);
    expect(g.bars).to.deep.equal([]);
    expect(chartSvg(g, 'none')).to.include('<svg');
  });
});
