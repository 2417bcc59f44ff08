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
  const { topic, partition, offset } = event.position;
  const seen = stored._pos?.find((p) => p.topic === topic && p.partition === partition);
  return seen !== undefined && BigInt(seen.offset) >= BigInt(offset);
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

export class KeyNotReady extends TransientError {
  constructor(subscriptionId: string, waitedMs: number) {
    super(`the key of subscription ${subscriptionId} is not in the keys projection yet (waited ${waitedMs} ms)`);
    this.name = 'KeyNotReady';
  }
}

/**
 * Resolves once the keys projection holds the key of this key.generated, so a key is answered
 * valid by /validate before its e-mail leaves. The issuer applies the key to the projection right
 * after publishing it, so this is normally one read; a key whose writer crashed in between waits
 * for the keys projection's consumer. Gives up with a transient error after `maxWaitMs` (the runner
 * then retries with backoff, heartbeating), so a partition is never held beyond the session.
 */
export async function waitForKey(
  load: (subscriptionId: string) => Promise<StoredDocument<Document> | null>,
  event: Pick<DeliveredEvent<KeyGenerated>, 'data' | 'position'>,
  options: { maxWaitMs?: number; signal?: AbortSignal; sleep?: (ms: number) => Promise<void> } = {},
): Promise<void> {
  const maxWaitMs = options.maxWaitMs ?? 2000;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    if (keyApplied(await load(event.data.subscriptionId), event)) return;
    const waited = Date.now() - started;
    if (waited >= maxWaitMs || options.signal?.aborted) throw new KeyNotReady(event.data.subscriptionId, waited);
    const wait = readyBackoff(attempt);
    if (wait > 0) await sleep(wait);
  }
}
