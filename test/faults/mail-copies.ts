/**
 * SMTP cannot accept a message and let us record it in one step: a mailer killed between the server's
 * 250 and its own record leaves the effect unrecorded, and the next owner sends it again after the
 * lease, with the same Message-ID. Such a copy is counted apart from a duplicate with any other
 * cause, and only when what was recorded shows it: the effect's claim was taken over from the very
 * process that was killed (events/effects.ts, previousOwners), that kill came at most
 * ACCEPT_TO_RECORD_MS after the copy before, and the copy after came once the lease had run out and not
 * long after it. The bounds are generous for a database write and a redelivery under load; a copy
 * outside them is a defect.
 */
export const ACCEPT_TO_RECORD_MS = 2000;
/** After the lease, the takeover waits for the event's redelivery: a consumer's retry backoff and a rebalance. */
export const RESEND_AFTER_LEASE_MS = 60_000;

/** A SIGKILL of a mailer process: when, and which process (its pid, part of its owner id). */
export interface MailerKill {
  atMs: number;
  pid: number;
}

/** The pid in an owner id (services/platform/runtime.ts instanceId: `<host>:<pid>:<random>`). */
export const pidOfOwner = (owner: string): number | undefined => {
  const pid = Number(owner.split(':')[1]);
  return Number.isInteger(pid) ? pid : undefined;
};

/**
 * Copies of one Message-ID are explained by kills when each copy after the first follows the kill of
 * a mailer process the effect's claim was taken over from (one kill, and one takeover, per re-sent
 * copy), that kill at most ACCEPT_TO_RECORD_MS after the copy before, and the copy within the lease plus
 * RESEND_AFTER_LEASE_MS of the kill.
 */
export function explainedByKill(
  createdMs: readonly number[],
  kills: readonly MailerKill[],
  previousOwners: readonly string[],
  leaseMs: number,
): boolean {
  const copies = [...createdMs].sort((a, b) => a - b);
  if (copies.length < 2) return false;
  const takenFrom = new Set(previousOwners.map(pidOfOwner).filter((p): p is number => p !== undefined));
  const used = new Set<MailerKill>();
  for (let i = 1; i < copies.length; i++) {
    const before = copies[i - 1]!;
    const after = copies[i]!;
    // Mailpit stamps in whole milliseconds; allow it to round past our own stamp of the kill.
    const kill = kills.find(
      (k) =>
        !used.has(k) &&
        takenFrom.has(k.pid) &&
        before <= k.atMs + 5 &&
        k.atMs - before <= ACCEPT_TO_RECORD_MS &&
        after > k.atMs &&
        after <= k.atMs + leaseMs + RESEND_AFTER_LEASE_MS,
    );
    if (!kill) return false;
    used.add(kill);
  }
  return true;
}
