import type { Document } from 'mongodb';
import type { DeliveredEvent } from '../../events/envelope.ts';
import { TransientError } from '../../events/errors.ts';
import type { StoredDocument } from '../../events/projection.ts';
import type { KeyGenerated } from '../keys/events.ts';

/**
 * Whether the keys projection document holds what a key.generated did to it (pure): it names this
 * very key, or it has applied the event's position on its partition (a later rotation replaced the
 * key, or the event was not adopted: the mail is then about a key the projection already judged).
 * Until then /validate would not know the key: its e-mail must wait.
 */
export function keyApplied(
  stored: StoredDocument<Document> | null,
  event: Pick<DeliveredEvent<KeyGenerated>, 'data' | 'position'>,
): boolean {
  if (!stored) return false;
  if (!stored._deleted && stored.keyHash === event.data.keyHash) return true;
  const members = stored.members as { keyHash: string }[] | undefined;
  if (!stored._deleted && members?.some((m) => m.keyHash === event.data.keyHash)) return true;
  return positionApplied(stored, event.position);
}

/** Whether the document has applied the event at this position (pure): its partition's offset is at or past it. */
export function positionApplied(stored: StoredDocument<Document> | null, position: DeliveredEvent['position']): boolean {
  const seen = stored?._pos?.find((p) => p.topic === position.topic && p.partition === position.partition);
  return seen !== undefined && BigInt(seen.offset) >= BigInt(position.offset);
}

/**
 * The wait before look number `attempt + 1` at the projection (pure): none for the first
 * `immediateLooks` (the mailer usually has the event while the issuer is still writing the key, a
 * read and a write after publishing it, so the next look goes out as soon as the last one answers:
 * a 2 ms sleep there was most of the mailer's "key check + claim" hop, issue 37), then every
 * `firstMs` up to `quickLooks` (a longer step would only add to every e-mail's latency), then
 * doubling up to `maxMs`.
 */
export function readyBackoff(attempt: number, firstMs = 2, quickLooks = 20, maxMs = 100, immediateLooks = 5): number {
  if (attempt < immediateLooks) return 0;
  if (attempt < quickLooks) return firstMs;
  return Math.min(maxMs, firstMs * 2 ** (attempt - quickLooks + 1));
}

/** What an e-mail links to is not in the projection that answers the link yet: retried. */
export class NotProjectedYet extends TransientError {
  constructor(what: string, waitedMs: number) {
    super(`${what} is not in its projection yet (waited ${waitedMs} ms)`);
    this.name = 'NotProjectedYet';
  }
}

export class KeyNotReady extends NotProjectedYet {
  constructor(subscriptionId: string, waitedMs: number) {
    super(`the key of subscription ${subscriptionId}`, waitedMs);
    this.name = 'KeyNotReady';
  }
}

export interface ReadyWaitOptions {
  maxWaitMs?: number;
  signal?: AbortSignal;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Resolves once `applied` holds for the document `load` returns, looking again with readyBackoff;
 * rejects with `notReady(waitedMs)` after `maxWaitMs` (default 2 s), so the runner retries with
 * backoff and a partition is never held beyond the session.
 */
export async function waitUntilApplied(
  load: () => Promise<StoredDocument<Document> | null>,
  applied: (stored: StoredDocument<Document> | null) => boolean,
  notReady: (waitedMs: number) => Error,
  options: ReadyWaitOptions = {},
): Promise<void> {
  const maxWaitMs = options.maxWaitMs ?? 2000;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    if (applied(await load())) return;
    const waited = Date.now() - started;
    if (waited >= maxWaitMs || options.signal?.aborted) throw notReady(waited);
    const wait = readyBackoff(attempt);
    if (wait > 0) await sleep(wait);
  }
}

/**
 * Resolves once the keys projection holds the key of this key.generated, so a key is answered
 * valid by /validate before its e-mail leaves. The issuer applies the key to the projection right
 * after publishing it, so this is normally one read; a key whose writer crashed in between waits
 * for the keys projection's consumer. Gives up with a transient error after `maxWaitMs` (the runner
 * then retries with backoff, heartbeating), so a partition is never held beyond the session.
 */
export function waitForKey(
  load: (subscriptionId: string) => Promise<StoredDocument<Document> | null>,
  event: Pick<DeliveredEvent<KeyGenerated>, 'data' | 'position'>,
  options: ReadyWaitOptions = {},
): Promise<void> {
  const id = event.data.subscriptionId;
  return waitUntilApplied(
    () => load(id),
    (stored) => keyApplied(stored, event),
    (waited) => new KeyNotReady(id, waited),
    options,
  );
}
