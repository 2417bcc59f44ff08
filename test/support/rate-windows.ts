/**
 * Rate-limit windows are aligned to the clock: a test that must stay inside one window starts when
 * enough of the current one is left (a wait for a point in time, not for an effect). Returns when
 * that window ends, in Unix milliseconds.
 */
export async function windowWithRoom(windowSeconds: number, neededMs = 10_000): Promise<number> {
  const windowMs = windowSeconds * 1000;
  const left = windowMs - (Date.now() % windowMs);
  if (left < neededMs) await new Promise((resolve) => setTimeout(resolve, left + 5));
  return (Math.floor(Date.now() / windowMs) + 1) * windowMs;
}
