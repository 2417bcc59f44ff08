import { expect } from 'chai';
import { FIGURES_PREFIX, parseFigures, ratioOf, type BenchFigure } from '../../../bench/figures.ts';
import { formatNumber, formatRatio, formatSummary, summaryRows, tally, verdict, type BenchOutcome } from '../../../bench/summary.ts';

const figure = (over: Partial<BenchFigure>): BenchFigure => ({
  figure: 'replay events/s',
  ours: 60_000,
  baseline: 100_000,
  baselineName: 'raw consume',
  unit: 'events/s',
  target: '>= 0.5x',
  met: true,
  ...over,
});

describe('npm run bench summary table (unit)', () => {
  it('judges each figure MET, MISSED or n/a from its own met flag', () => {
    expect(verdict({ met: true })).to.equal('MET');
    expect(verdict({ met: false })).to.equal('MISSED');
    expect(verdict({ met: null })).to.equal('n/a');
  });

  it('gives ours ÷ baseline as the ratio, and none for an absolute figure or a zero baseline', () => {
    expect(formatRatio(figure({ ours: 60_000, baseline: 100_000 }))).to.equal('0.60x');
    expect(formatRatio(figure({ ours: 3, baseline: 2 }))).to.equal('1.50x');
    expect(formatRatio(figure({ baseline: null }))).to.equal('—');
    expect(formatRatio(figure({ baseline: 0 }))).to.equal('—');
    expect(Number.isNaN(ratioOf(figure({ baseline: null })))).to.equal(true);
  });

  it('formats whole numbers and numbers from 100 up with separators, others with a few digits', () => {
    expect(formatNumber(1_234_567.8)).to.equal('1,234,568');
    expect(formatNumber(123.4)).to.equal('123');
    expect(formatNumber(42.345)).to.equal('42.3');
    expect(formatNumber(4.567)).to.equal('4.57');
    expect(formatNumber(0)).to.equal('0');
    expect(formatNumber(3)).to.equal('3');
    expect(formatNumber(0.0123)).to.equal('0.012');
    expect(formatNumber(Number.NaN)).to.equal('—');
  });

  it('makes one row per figure, and one for each benchmark that failed, was skipped or reported nothing', () => {
    const outcomes: BenchOutcome[] = [
      {
        name: 'events-throughput',
        status: 'ok',
        reports: [
          {
            bench: 'events',
            figures: [
              figure({
                figure: 'consume msgs/s',
                ours: 90_000,
                baseline: 100_000,
                baselineName: 'bare kafkajs',
                target: '>= 0.9x',
                met: true,
              }),
            ],
          },
        ],
      },
      {
        name: 'validate',
        status: 'failed',
        reason: 'exit code 1',
        reports: [
          {
            bench: 'validate',
            figures: [
              figure({ figure: 'p99 at 0.3x', ours: 7.2, baseline: null, baselineName: null, unit: 'ms', target: '< 5 ms', met: false }),
            ],
          },
        ],
      },
      { name: 'webhook-to-key', status: 'skipped', reason: 'bench/webhook-to-key.ts does not exist', reports: [] },
      { name: 'replay', status: 'ok', reports: [] },
    ];
    const rows = summaryRows(outcomes);
    expect(rows.map((r) => [r.bench, r.result])).to.deep.equal([
      ['events-throughput', 'MET'],
      ['validate', 'MISSED'],
      ['validate', 'FAILED'],
      ['webhook-to-key', 'SKIPPED'],
      ['replay', 'NO FIGURES'],
    ]);
    expect(rows[0]).to.include({ ours: '90,000 events/s', baseline: '100,000 events/s (bare kafkajs)', ratio: '0.90x', target: '>= 0.9x' });
    expect(rows[1]).to.include({ ours: '7.20 ms', baseline: '—', ratio: '—' });
    expect(rows[2]!.figure).to.equal('exit code 1');
    expect(tally(outcomes)).to.deep.equal({ met: 1, missed: 1, unjudged: 0, failed: ['validate'], skipped: ['webhook-to-key'] });
  });

  it('prints one aligned table with a closing line naming what failed', () => {
    const outcomes: BenchOutcome[] = [
      {
        name: 'replay',
        status: 'ok',
        reports: [
          {
            bench: 'replay',
            figures: [
              figure({}),
              figure({
                figure: 'replay of 1M events',
                ours: 21.5,
                baseline: null,
                baselineName: null,
                unit: 's',
                target: '< 60 s',
                met: null,
              }),
            ],
          },
        ],
      },
      { name: 'validate', status: 'failed', reason: 'exit code 1', reports: [] },
    ];
    const lines = formatSummary(outcomes).split('\n');
    expect(lines[0]).to.match(/^bench\s+figure\s+ours\s+baseline\s+ratio\s+target\s+result$/);
    expect(lines[1]).to.match(/^-+( +-+){6}$/);
    // Every column starts at the same place on every row.
    const resultColumn = lines[0]!.indexOf('result');
    expect(lines[2]!.slice(resultColumn)).to.equal('MET');
    expect(lines[3]!.slice(resultColumn)).to.equal('n/a');
    expect(lines[4]!.slice(resultColumn)).to.equal('FAILED');
    expect(lines.at(-1)).to.equal('1 met, 0 missed, 1 not judged; FAILED: validate');
  });

  it("reads back what emitFigures writes, ignoring every other line of a benchmark's stdout", () => {
    const report = { bench: 'replay', figures: [figure({})] };
    const stdout = `a table\n${FIGURES_PREFIX}${JSON.stringify(report)}\nmore text\n`;
    expect(parseFigures(stdout)).to.deep.equal([report]);
  });
});
