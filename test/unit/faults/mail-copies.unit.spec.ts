import { expect } from 'chai';
import { ACCEPT_TO_RECORD_MS, explainedByKill } from '../../faults/mail-copies.ts';

describe('faults audit: copies of one e-mail placed against mailer kills (unit)', () => {
  const kill = 1_000_000;

  it('explains a copy re-sent after a kill that came just after the first was accepted', () => {
    expect(explainedByKill([kill - 12, kill + 5200], [kill])).to.equal(true);
    expect(explainedByKill([kill + 5200, kill - 12], [kill]), 'order of the copies').to.equal(true);
  });

  it('does not explain a single copy or copies with no kill between them', () => {
    expect(explainedByKill([kill - 12], [kill])).to.equal(false);
    expect(explainedByKill([kill - 12, kill + 5200], [])).to.equal(false);
    expect(explainedByKill([kill + 10, kill + 5200], [kill]), 'both copies after the kill').to.equal(false);
  });

  it('does not explain a first copy accepted long before the kill', () => {
    expect(explainedByKill([kill - ACCEPT_TO_RECORD_MS - 1, kill + 5200], [kill])).to.equal(false);
  });

  it('needs one kill per re-sent copy', () => {
    expect(explainedByKill([kill - 12, kill + 5200, kill + 5300], [kill])).to.equal(false);
    expect(explainedByKill([kill - 12, kill + 5200, kill + 10_400], [kill, kill + 5250])).to.equal(true);
  });
});
