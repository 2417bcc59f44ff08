import { createRequire } from 'node:module';
import { expect } from 'chai';
// Imported for its side effect too: loading the Kafka client module mends kafkajs's request queue.
import '../../../events/kafka.ts';
import { kafkajsRequestQueue, MENDED_KAFKAJS_VERSION, type RequestQueueState } from '../../../events/kafkajs-request-queue.ts';

const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** A request queue as a broker connection makes one, with no socket: sendRequest is the test's. */
function queue(maxInFlightRequests: number | null = null): RequestQueueState & {
  push(request: unknown): void;
  fulfillRequest(answer: { correlationId: number; payload: unknown; size: number }): void;
  destroy(): void;
} {
  const RequestQueue = kafkajsRequestQueue();
  return new RequestQueue({
    maxInFlightRequests,
    requestTimeout: 10_000,
    enforceRequestTimeout: false,
    clientId: 'test',
    broker: 'localhost:9092',
    logger: quiet,
  }) as ReturnType<typeof queue>;
}

/** A request whose `sent` settles when the queue hands it to the socket, and `answered` when its answer is read. */
function request(correlationId: number) {
  let markSent!: () => void;
  const sent = new Promise<void>((resolve) => {
    markSent = resolve;
  });
  const entry: {
    correlationId: number;
    apiKey: number;
    apiName: string;
    apiVersion: number;
    resolve: (answer: unknown) => void;
    reject: (error: unknown) => void;
  } = {
    correlationId,
    apiKey: 3,
    apiName: 'Metadata',
    apiVersion: 6,
    resolve: () => undefined,
    reject: () => undefined,
  };
  const answered = new Promise((resolve, reject) => {
    entry.resolve = resolve;
    entry.reject = reject;
  });
  let wasSent = false;
  return {
    pushed: {
      entry,
      expectResponse: true,
      sendRequest: () => {
        wasSent = true;
        markSent();
      },
    },
    sent,
    answered,
    wasSent: () => wasSent,
  };
}

describe('kafkajs request queue, mended (unit)', () => {
  it('is the kafkajs release the mend was written for', () => {
    const { version } = createRequire(import.meta.url)('kafkajs/package.json') as { version: string };
    expect(version, "read the new release's scheduleCheckPendingRequests, then update or drop events/kafkajs-request-queue.ts").to.equal(
      MENDED_KAFKAJS_VERSION,
    );
  });

  it('leaves no timer behind once a request is answered and nothing waits (kafkajs re-armed a 1 ms one forever)', async () => {
    const q = queue();
    try {
      const r = request(1);
      q.push(r.pushed);
      await r.sent;
      q.fulfillRequest({ correlationId: 1, payload: { ok: true }, size: 4 });
      expect(await r.answered).to.include({ correlationId: 1, size: 4 });
      expect(q.pending).to.have.length(0);
      expect(q.throttleCheckTimeoutId, 'a timer armed with nothing waiting').to.equal(null);
    } finally {
      q.destroy();
    }
  });

  it("sends a request held back by the broker's throttle once the throttle ends", async () => {
    const q = queue();
    try {
      q.throttledUntil = Date.now() + 30;
      const r = request(1);
      q.push(r.pushed);
      expect(r.wasSent(), 'sent while throttled').to.equal(false);
      expect(q.pending).to.have.length(1);
      expect(q.throttleCheckTimeoutId, 'no look scheduled for the waiting request').to.not.equal(null);
      await r.sent;
      expect(Date.now()).to.be.at.least(q.throttledUntil);
      expect(q.pending).to.have.length(0);
      q.fulfillRequest({ correlationId: 1, payload: null, size: 0 });
      await r.answered;
      expect(q.throttleCheckTimeoutId).to.equal(null);
    } finally {
      q.destroy();
    }
  });

  it('sends a request held back by the in-flight limit when an answer frees a place', async () => {
    const q = queue(1);
    try {
      const first = request(1);
      const second = request(2);
      q.push(first.pushed);
      q.push(second.pushed);
      await first.sent;
      expect(second.wasSent(), 'sent past the in-flight limit').to.equal(false);
      q.fulfillRequest({ correlationId: 1, payload: null, size: 0 });
      await second.sent;
      q.fulfillRequest({ correlationId: 2, payload: null, size: 0 });
      await Promise.all([first.answered, second.answered]);
      expect(q.pending).to.have.length(0);
      expect(q.throttleCheckTimeoutId).to.equal(null);
    } finally {
      q.destroy();
    }
  });
});
