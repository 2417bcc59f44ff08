import { expect } from 'chai';
import { atTurn, turnShare, WINDOW_MS } from '../../../bench/window-turns.ts';

describe("bench/window-turns: where a run's slowest requests fall against the rate limits' window turns (unit)", () => {
  const turn = 1_800 * WINDOW_MS; // a minute of the clock

  it('counts from half a second before a turn to a second after it', () => {
    expect(atTurn(turn)).to.equal(true);
    expect(atTurn(turn - 500)).to.equal(true);
    expect(atTurn(turn - 501)).to.equal(false);
    expect(atTurn(turn + 999)).to.equal(true);
    expect(atTurn(turn + 1000)).to.equal(false);
    expect(atTurn(turn + WINDOW_MS / 2)).to.equal(false);
  });

  it("gives the tail's share beside every request's share, and the turns the run held", () => {
    // Six requests a second apart, from 3 s before a turn: only the one at the turn falls in its span.
    const released = [-3000, -2000, -1000, 0, 1000, 2000].map((ms) => turn + ms);
    const latencies = [1, 1, 1, 50, 1, 40];
    const share = turnShare(latencies, released, 10);
    expect(share.turns).to.equal(1);
    expect(share.all).to.equal(1 / 6); // only the request at the turn itself: +1000 is past the span
    expect(share.tail).to.equal(1 / 2); // of the two over 10 ms, the one at the turn
  });

  it('holds no turn when the run stays inside one window, and no share without requests', () => {
    expect(turnShare([5, 6], [turn + 2000, turn + 8000], 5).turns).to.equal(0);
    expect(turnShare([], [], 0)).to.deep.equal({ turns: 0, tail: 0, all: 0 });
  });
});
