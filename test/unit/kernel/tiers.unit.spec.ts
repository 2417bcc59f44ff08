import { expect } from 'chai';
import { limitsOf, METRICS, periodOf, remaining, TIER_TABLE, TIERS, UNLIMITED } from '../../../services/kernel/tiers.ts';

const utc = (iso: string) => new Date(iso);

describe('tier table (unit)', () => {
  it('has a row for every tier', () => {
    expect(Object.keys(TIER_TABLE)).to.have.members([...TIERS]);
    for (const t of TIERS) expect(limitsOf(t)).to.equal(TIER_TABLE[t]);
    for (const t of TIERS) expect(Object.keys(limitsOf(t).quotas)).to.have.members([...METRICS]);
  });

  it('limits free to 60/min, 100 queries, 1000 files, no screenshots, no features', () => {
    expect(limitsOf('free')).to.deep.equal({
      requestsPerMinute: 60,
      quotas: { queries: 100, filesIndexed: 1000, screenshotsAnalyzed: 0 },
      features: { visionRAG: false, unlimitedIndexing: false, unlimitedQueries: false, prioritySupport: false },
    });
  });

  it('gives pro 600/min and team 6000/min, unlimited quotas and every feature', () => {
    const unlimited = { queries: -1, filesIndexed: -1, screenshotsAnalyzed: -1 };
    const all = { visionRAG: true, unlimitedIndexing: true, unlimitedQueries: true, prioritySupport: true };
    expect(limitsOf('pro')).to.deep.equal({ requestsPerMinute: 600, quotas: unlimited, features: all });
    expect(limitsOf('team')).to.deep.equal({ requestsPerMinute: 6000, quotas: unlimited, features: all });
  });

  it('cannot be changed by a reader', () => {
    expect(Object.isFrozen(TIER_TABLE)).to.equal(true);
    for (const t of TIERS) {
      expect(Object.isFrozen(TIER_TABLE[t])).to.equal(true);
      expect(Object.isFrozen(TIER_TABLE[t].quotas)).to.equal(true);
      expect(Object.isFrozen(TIER_TABLE[t].features)).to.equal(true);
    }
  });
});

describe('remaining quota (unit)', () => {
  it('keeps unlimited as -1 whatever was used', () => {
    expect(remaining(UNLIMITED, 0)).to.equal(-1);
    expect(remaining(-1, 1_000_000)).to.equal(-1);
  });

  it('subtracts and never goes below 0', () => {
    expect(remaining(100, 0)).to.equal(100);
    expect(remaining(100, 37)).to.equal(63);
    expect(remaining(100, 100)).to.equal(0);
    expect(remaining(100, 250)).to.equal(0);
    expect(remaining(0, 0)).to.equal(0);
  });
});

describe('quota period (unit)', () => {
  const cases: [string, string, string, string][] = [
    ['mid-month', '2026-05-17T13:45:00.000Z', '2026-05-01T00:00:00.000Z', '2026-06-01T00:00:00.000Z'],
    ['the first instant of a month', '2026-03-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z'],
    ['the last instant of a month', '2026-04-30T23:59:59.999Z', '2026-04-01T00:00:00.000Z', '2026-05-01T00:00:00.000Z'],
    ['December into January', '2026-12-31T23:59:59.999Z', '2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
    ['leap-day February', '2028-02-29T12:00:00.000Z', '2028-02-01T00:00:00.000Z', '2028-03-01T00:00:00.000Z'],
    ['non-leap February', '2027-02-28T23:00:00.000Z', '2027-02-01T00:00:00.000Z', '2027-03-01T00:00:00.000Z'],
    ['century non-leap February', '2100-02-15T00:00:00.000Z', '2100-02-01T00:00:00.000Z', '2100-03-01T00:00:00.000Z'],
  ];
  for (const [what, at, start, reset] of cases) {
    it(`covers the UTC calendar month for ${what}`, () => {
      const p = periodOf(utc(at));
      expect(p.start.toISOString()).to.equal(start);
      expect(p.resetDate.toISOString()).to.equal(reset);
    });
  }

  it('is UTC, not local time: a local-time offset does not move the month', () => {
    // 23:30 on 31 January in UTC-5 is already February in UTC.
    expect(periodOf(utc('2026-01-31T23:30:00-05:00')).start.toISOString()).to.equal('2026-02-01T00:00:00.000Z');
  });

  it('has 29 days in a leap February and 28 otherwise', () => {
    const days = (iso: string) => {
      const p = periodOf(utc(iso));
      return (p.resetDate.getTime() - p.start.getTime()) / 86_400_000;
    };
    expect(days('2024-02-10T00:00:00Z')).to.equal(29);
    expect(days('2000-02-10T00:00:00Z')).to.equal(29);
    expect(days('2026-02-10T00:00:00Z')).to.equal(28);
    expect(days('2100-02-10T00:00:00Z')).to.equal(28);
  });

  it('refuses an invalid date', () => {
    expect(() => periodOf(new Date('nope'))).to.throw(RangeError);
  });
});
