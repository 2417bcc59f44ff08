/**
 * SMTP cannot accept a message and let us record it in one step: a mailer killed between the server's
 * 250 and its own record leaves the effect unrecorded, and the next owner sends it again after the
 * lease, with the same Message-ID. Such a copy is counted apart from a duplicate with any other
 * cause. The bound is generous for a database write under load; a copy outside it is a defect.
 */
export const ACCEPT_TO_RECORD_MS = 2000;

/**
 * Copies of one Message-ID are explained by kills when each copy after the first follows a kill of a
 * mailer that came at most ACCEPT_TO_RECORD_MS after the copy before it: one re-send per kill.
 */
export function explainedByKill(createdMs: readonly number[], killedAt: readonly number[]): boolean {
  const copies = [...createdMs].sort((a, b) => a - b);
  if (copies.length < 2) return false;
  for (let i = 1; i < copies.length; i++) {
    const before = copies[i - 1]!;
    const after = copies[i]!;
    // Mailpit stamps in whole milliseconds; allow it to round past our own stamp of the kill.
    const killed = killedAt.some((k) => before <= k + 5 && k - before <= ACCEPT_TO_RECORD_MS && after > k);
    if (!killed) return false;
  }
  return true;
}
