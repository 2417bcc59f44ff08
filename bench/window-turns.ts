/**
 * The rate limits' windows turn on the clock's minutes (rate-limits.ts: 60 s, no offset), when every
 * busy key and client address enters a window it must hold a block of. A span around each turn:
 * from half a second before (the last claims ahead) to a second after.
 */
export const WINDOW_MS = 60_000;
export const TURN_SPAN = { beforeMs: 500, afterMs: 1000 };

export interface TurnShare {
  /** Window turns inside the run. */
  turns: number;
  /** Share of the requests slower than the run's p99 released in a turn's span. */
  tail: number;
  /** Share of all the run's requests released in a turn's span: what the tail's share is to be read against. */
  all: number;
}

export function atTurn(epochMs: number): boolean {
  const into = ((epochMs % WINDOW_MS) + WINDOW_MS) % WINDOW_MS;
  return into < TURN_SPAN.afterMs || into >= WINDOW_MS - TURN_SPAN.beforeMs;
}

/** Where the requests slower than p99 were released, against the window turns (latencies and releases index for index). */
export function turnShare(latencies: ArrayLike<number>, releasedAt: ArrayLike<number>, p99: number): TurnShare {
  let tail = 0;
  let tailAt = 0;
  let allAt = 0;
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < latencies.length; i++) {
    const at = atTurn(releasedAt[i]!);
    if (at) allAt++;
    if (latencies[i]! > p99) {
      tail++;
      if (at) tailAt++;
    }
    first = Math.min(first, releasedAt[i]!);
    last = Math.max(last, releasedAt[i]!);
  }
  const turns = latencies.length === 0 ? 0 : Math.floor(last / WINDOW_MS) - Math.floor(first / WINDOW_MS);
  return { turns, tail: tail ? tailAt / tail : 0, all: latencies.length ? allAt / latencies.length : 0 };
}
