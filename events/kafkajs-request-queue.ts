import { createRequire } from 'node:module';

/** The kafkajs release whose request queue this mends; another one must be read again before it is mended. */
export const MENDED_KAFKAJS_VERSION = '2.2.4';

/** kafkajs's own wait before it looks at a queue whose requests wait on the in-flight limit. */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;

/** The part of kafkajs's RequestQueue (src/network/requestQueue/index.js) the mend reads and sets. */
export interface RequestQueueState {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

type RequestQueueClass = new (options: Record<string, unknown>) => RequestQueueState;

const require = createRequire(import.meta.url);

/** kafkajs's RequestQueue class: the very module its connections load (one module cache entry). */
export function kafkajsRequestQueue(): RequestQueueClass {
  return require('kafkajs/src/network/requestQueue/index.js') as RequestQueueClass;
}

/**
 * kafkajs 2.2.4 re-arms a timer on every broker connection after every answer, even with nothing
 * waiting: `throttledUntil` is -1 when nothing throttles, so the delay is about minus the Unix time,
 * which Node runs after 1 ms. Each connection then wakes the event loop a thousand times a second
 * for as long as it is open (kafkajs issues 1556, 1704, 1751; unfixed upstream). In the keys service
 * that was garbage on the loop that answers /validate (issue 37) and CPU spent by every idle replica.
 *
 * This one schedules a look only when a request waits: at the end of the broker's throttle, or
 * after kafkajs's own 10 ms when the request waits on the in-flight limit (kafkajs PR 1532's
 * case). A queue with nothing waiting needs no timer, and a look left from requests sent since is
 * dropped: a request pushed later schedules its own (push), and an answer runs the check itself
 * (fulfillRequest).
 */
function scheduleCheckPendingRequests(this: RequestQueueState): void {
  if (this.pending.length === 0) {
    // A look scheduled for requests that have all been sent since has nothing left to do.
    if (this.throttleCheckTimeoutId !== null) clearTimeout(this.throttleCheckTimeoutId);
    this.throttleCheckTimeoutId = null;
    return;
  }
  if (this.throttleCheckTimeoutId !== null) return;
  const untilUnthrottled = this.throttledUntil - Date.now();
  this.throttleCheckTimeoutId = setTimeout(
    () => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    },
    untilUnthrottled > 0 ? untilUnthrottled : CHECK_PENDING_REQUESTS_INTERVAL_MS,
  );
}

/**
 * Mends kafkajs's RequestQueue in this process, once; every connection made after shares it. Throws
 * for a kafkajs other than the one read, so an upgrade cannot keep a mend written for older code.
 */
export function mendKafkajsRequestQueue(): void {
  const { version } = require('kafkajs/package.json') as { version: string };
  if (version !== MENDED_KAFKAJS_VERSION)
    throw new Error(
      `kafkajs ${version} is installed; events/kafkajs-request-queue.ts mends ${MENDED_KAFKAJS_VERSION}'s request queue: read the new one's scheduleCheckPendingRequests, then update or drop the mend`,
    );
  kafkajsRequestQueue().prototype.scheduleCheckPendingRequests = scheduleCheckPendingRequests;
}
