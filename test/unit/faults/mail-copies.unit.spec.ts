import { expect } from 'chai';
import { ACCEPT_TO_RECORD_MS, explainedByKill, RESEND_AFTER_LEASE_MS } from '../../faults/mail-copies.ts';

describe('faults audit: copies of one e-mail placed against mailer kills (unit)', () => {
  const kill = 1_000_000;
  const LEASE = 5000;
  const killed = { atMs: kill, pid: 4242 };
  const other = { atMs: kill, pid: 5151 };
  // The effect's claim, taken over from the killed process (owner ids are `<host>:<pid>:<random>`).
  const fromKilled = ['mailer-2:4242:ab12cd34'];

  it('explains a copy re-sent after the kill of the process the claim was taken over from, just after the first was accepted', () => {
    expect(explainedByKill([kill - 12, kill + 5200], [killed], fromKilled, LEASE)).to.equal(true);
    expect(explainedByKill([kill + 5200, kill - 12], [killed], fromKilled, LEASE), 'order of the copies').to.equal(true);
  });

  it("does not explain a copy when the claim was not the killed process's: another replica's send, or no takeover recorded", () => {
    expect(explainedByKill([kill - 12, kill + 5200], [other], fromKilled, LEASE), 'another process was killed').to.equal(false);
    expect(explainedByKill([kill - 12, kill + 5200], [killed], [], LEASE), 'no takeover recorded').to.equal(false);
    expect(explainedByKill([kill - 12, kill + 5200], [killed], ['mailer-1:7777:ffff0000'], LEASE), 'taken over from a live one').to.equal(
      false,
    );
  });

  it('does not explain a single copy or copies with no kill between them', () => {
    expect(explainedByKill([kill - 12], [killed], fromKilled, LEASE)).to.equal(false);
    expect(explainedByKill([kill - 12, kill + 5200], [], fromKilled, LEASE)).to.equal(false);
    expect(explainedByKill([kill + 10, kill + 5200], [killed], fromKilled, LEASE), 'both copies after the kill').to.equal(false);
  });

  it('does not explain a first copy accepted long before the kill, nor a re-send long after the lease', () => {
    expect(explainedByKill([kill - ACCEPT_TO_RECORD_MS - 1, kill + 5200], [killed], fromKilled, LEASE)).to.equal(false);
    expect(
      explainedByKill([kill - 12, kill + LEASE + RESEND_AFTER_LEASE_MS + 1], [killed], fromKilled, LEASE),
      'no upper bound before',
    ).to.equal(false);
    expect(explainedByKill([kill - 12, kill + LEASE + RESEND_AFTER_LEASE_MS], [killed], fromKilled, LEASE)).to.equal(true);
  });

  it('needs one kill, and one takeover from it, per re-sent copy', () => {
    expect(explainedByKill([kill - 12, kill + 5200, kill + 5300], [killed], fromKilled, LEASE)).to.equal(false);
    const second = { atMs: kill + 5250, pid: 4343 };
    expect(
      explainedByKill([kill - 12, kill + 5200, kill + 10_400], [killed, second], [...fromKilled, 'mailer-2b:4343:00aa11bb'], LEASE),
    ).to.equal(true);
    expect(
      explainedByKill([kill - 12, kill + 5200, kill + 10_400], [killed, second], fromKilled, LEASE),
      'the second takeover missing',
    ).to.equal(false);
  });
});
