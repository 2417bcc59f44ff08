import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { header, type EventCodec } from './codec.ts';
import { isEventOf, partitionKey, type DeliveredEvent, type Event } from './envelope.ts';
import { errorMessage, isPermanent, isTransient } from './errors.ts';
import type { EventLog } from './event-log.ts';
import { consumerClient } from './kafka.ts';
import { inEventSpan, recordDeadLetter, recordRetry, startChunkSpans } from './kafka-spans.ts';
import { eventMetrics } from './metrics.ts';
import type { EventPublisher } from './publisher.ts';
import { dlqTopic } from './topics.ts';

/**
 * A handler receives the events of one partition in log order, in chunks. It must be idempotent:
 * after a crash the events since the last commit are delivered again.
 */
export interface EventHandler {
  handle(events: readonly DeliveredEvent[], context: HandlerContext): Promise<void>;
}

/** What a long handler needs from the runner: to stay in its group, and to know it should stop. */
export interface HandlerContext {
  /** Tells the broker this member is alive; call it every few seconds during long work. */
  heartbeat(): Promise<void>;
  /** Aborted when the runner stops: stop between units of work (the events come back after a restart). */
  signal: AbortSignal;
}

export interface ConsumerOptions {
  kafka: Kafka;
  codec: EventCodec;
  /** Dead letters and nothing else go through it. */
  publisher: EventPublisher;
  log: EventLog;
  groupId: string;
  topics: readonly string[];
  handler: EventHandler;
  fromBeginning?: boolean;
  /** Attempts after the first for a failing event before it is dead-lettered. */
  retries?: number;
  backoff?: { initialMs: number; maxMs: number };
  /** Largest group of consecutive events handed to the handler at once. */
  chunkSize?: number;
  /** Without a fetch, a heartbeat or a handled chunk for this long, a running consumer counts as stalled. */
  stallMs?: number;
  /**
   * How long the broker waits for this member's heartbeat before handing its partitions to others
   * (default 30 s): after a crash, its partitions wait that long. Every single call a handler makes
   * must be bounded below it.
   */
  sessionTimeoutMs?: number;
  /**
   * Partitions handled at once (default 1). Long handlers (index jobs) take more, so that one
   * partition's long event does not hold the others' back.
   */
  partitionsAtOnce?: number;
  /**
   * Commit offsets to the group (default true). A feed that keeps its own position (the keys caches)
   * commits none, so a group its killed process leaves behind holds no offsets and the broker removes it.
   */
  commitOffsets?: boolean;
  /**
   * How often handled offsets are committed, in ms (default DEFAULT_COMMIT_INTERVAL_MS); 0 commits
   * after every chunk. A group whose committed offsets others read as "applied up to here" (the
   * projections the keys caches follow) takes 0.
   */
  commitIntervalMs?: number;
}

/**
 * Handled offsets wait this long to be committed together. A commit is a write to the broker's
 * offsets log: after every chunk, one event read by nine consumer groups made nine of them, a fifth
 * of the broker's CPU on the path issue 37 measured. What a longer interval costs is redelivery after
 * a crash or a rebalance, which every handler already absorbs; a stop commits first.
 */
export const DEFAULT_COMMIT_INTERVAL_MS = 1000;

export const DLQ_HEADER = {
  error: 'dlq-error',
  topic: 'dlq-original-topic',
  partition: 'dlq-original-partition',
  offset: 'dlq-original-offset',
  group: 'dlq-consumer-group',
  failedAt: 'dlq-failed-at',
  /** Set by `svc dlq redrive`: only this consumer group handles the re-driven copy; the others skip it. */
  redriveGroup: 'dlq-redrive-group',
} as const;

/** What /health reports about one consumer group of this process. */
export interface ConsumerHealth {
  group: string;
  state: 'starting' | 'joined' | 'rebalancing' | 'restarting' | 'crashed' | 'stopped';
  ok: boolean;
  /** Why it is not ok, for operators. */
  problem?: string;
  /** Milliseconds since the consumer last fetched, heartbeated or handled a chunk. */
  idleMs: number;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/** Whether `promise` settled before `deadline` (epoch ms); it is not waited for beyond it. */
async function within(promise: Promise<unknown>, deadline: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()))));
  try {
    return await Promise.race([promise.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** How long a handler may keep failing on a dependency before readiness reports it. */
const BLOCKED_REPORT_MS = 5000;
/** How long a consumer may take to join its group before readiness reports it. */
const JOIN_GRACE_MS = 60_000;

/**
 * Runs a consumer group: per-partition order, offsets committed only for events whose handler
 * succeeded, bounded retries then the dead-letter topic (at once for a permanent failure), and
 * dependency outages waited out while heartbeating, so the group does not rebalance around a wait.
 */
export class ConsumerRunner {
  private readonly consumer: Consumer;
  private readonly stopping = new AbortController();
  private readonly retries: number;
  private readonly backoff: { initialMs: number; maxMs: number };
  private readonly chunkSize: number;
  private readonly stallMs: number;
  private readonly log: EventLog;
  private readonly options: ConsumerOptions;
  private state: ConsumerHealth['state'] = 'starting';
  private readonly startedAt = Date.now();
  private lastActivity = Date.now();
  /** Since when a fetch has been asked for and not answered (the broker away): unset once one is. */
  private fetchingSince: number | undefined;
  private blockedSince: number | undefined;
  private lastError: string | undefined;
  /** 0: kafkajs commits after every batch; otherwise this runner commits on a timer (commitOffsets false: never). */
  readonly #commitEveryMs: number;
  /** Per partition, the next offset to read once what was handled is committed. */
  readonly #pending = new Map<string, { topic: string; partition: number; offset: string }>();
  #lastCommit = 0;
  #commitTimer: NodeJS.Timeout | undefined;
  #committing: Promise<void> = Promise.resolve();
  /** Batches being handled, so a stop can commit after them and before leaving. */
  readonly #batches = new Set<Promise<void>>();

  constructor(options: ConsumerOptions) {
    this.options = options;
    this.#commitEveryMs = options.commitOffsets === false ? 0 : (options.commitIntervalMs ?? DEFAULT_COMMIT_INTERVAL_MS);
    const sessionTimeout = options.sessionTimeoutMs ?? 30_000;
    // Retries the broker for as long as it is away, keeping its member id (see consumerClient).
    this.consumer = consumerClient(options.kafka).consumer({
      groupId: options.groupId,
      allowAutoTopicCreation: false,
      sessionTimeout,
      heartbeatInterval: Math.min(3000, Math.floor(sessionTimeout / 3)),
      maxWaitTimeInMs: 250,
      retry: { initialRetryTime: 200, maxRetryTime: 5000, retries: Number.MAX_SAFE_INTEGER },
    });
    this.retries = options.retries ?? 3;
    this.backoff = options.backoff ?? { initialMs: 100, maxMs: 5000 };
    this.chunkSize = options.chunkSize ?? 500;
    this.stallMs = options.stallMs ?? 30_000;
    this.log = options.log.child({ component: 'consumer', group: options.groupId });
    const active = () => (this.lastActivity = Date.now());
    const { events } = this.consumer;
    this.consumer.on(events.FETCH_START, () => {
      this.fetchingSince ??= Date.now();
      active();
    });
    this.consumer.on(events.FETCH, () => {
      this.fetchingSince = undefined;
      active();
    });
    this.consumer.on(events.HEARTBEAT, active);
    this.consumer.on(events.GROUP_JOIN, ({ payload }) => {
      // Partitions now another member's: their handled offsets are that member's to commit.
      for (const [key, p] of this.#pending) if (!payload.memberAssignment[p.topic]?.includes(p.partition)) this.#pending.delete(key);
      this.state = 'joined';
      this.fetchingSince = undefined;
      active();
    });
    this.consumer.on(events.REBALANCING, () => {
      if (this.state !== 'stopped') this.state = 'rebalancing';
    });
    this.consumer.on(events.CRASH, ({ payload }) => {
      this.lastError = errorMessage(payload.error);
      // Only this runner's own stop ends it: kafkajs disconnects a crashed consumer before it reports
      // the crash, and that disconnect emits STOP, so the state already reads 'stopped' here (a
      // consumer kafkajs gave up on was never started again: npm run faults, 2026-12-07).
      if (this.stopping.signal.aborted) return;
      this.state = payload.restart ? 'restarting' : 'crashed';
      // kafkajs gives up for good on errors it calls non-retriable, "Failed to find group
      // coordinator" among them, which a broker restart produces; a consumer left like that sits
      // dead in a live process. Whatever the error, start it again, with backoff. It comes back as
      // a new member, whose join the broker may hold for a session while the old one expires:
      // the reason its client never stops retrying the broker (consumerClient).
      if (!payload.restart) this.restartAfterCrash(1);
    });
    this.consumer.on(events.STOP, () => {
      if (this.state !== 'crashed') this.state = 'stopped';
    });
  }

  get events() {
    return this.consumer.events;
  }

  get groupId(): string {
    return this.options.groupId;
  }

  on: Consumer['on'] = (...args) => this.consumer.on(...args);

  async start(): Promise<void> {
    // The first commit, too, comes an interval after the start: a busy start commits once, not per chunk.
    this.#lastCommit = Date.now();
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: [...this.options.topics], fromBeginning: this.options.fromBeginning ?? true });
    await this.consumer.run({
      autoCommit: (this.options.commitOffsets ?? true) && this.#commitEveryMs === 0,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.options.partitionsAtOnce ?? 1,
      eachBatch: (payload) => {
        const running = this.#eachBatch(payload).finally(() => this.#batches.delete(running));
        this.#batches.add(running);
        return running;
      },
    });
  }

  async #eachBatch({ batch, resolveOffset: resolve, heartbeat, isRunning: kafkaRunning, isStale }: EachBatchPayload): Promise<void> {
    const { topic, partition } = batch;
    // A stopping runner handles nothing more: what it handled is committed before it leaves.
    const isRunning = () => kafkaRunning() && !this.stopping.signal.aborted;
    // Asked before every step with an effect (a chunk handed over, a dead letter, an offset resolved),
    // not per record: kafkajs' isStale builds a JSON key per call, about a third of the runner's own
    // per-record cost besides decoding (consume bench, issue 37). Records decoded after a seek are dropped.
    const live = () => isRunning() && !isStale();
    const resolveOffset = (offset: string) => {
      resolve(offset);
      if (this.#commitEveryMs > 0) this.#handled(topic, partition, offset);
    };
    // Writer schemas of newer producers, fetched once each; nothing is fetched once they are all known.
    if (!(await this.prepare(batch.messages, isRunning, heartbeat))) return;
    eventMetrics.lag.set({ group: this.options.groupId, topic, partition: String(partition) }, Number(batch.offsetLag()));
    let chunk: { event: DeliveredEvent; message: KafkaMessage }[] = [];
    /** Hands the chunk over; false (nothing handed over, nothing resolved) once the batch is not live. */
    const flush = async (): Promise<boolean> => {
      if (!live()) return false;
      if (chunk.length === 0) return true;
      // Timing hooks (debug only; the benches time hops by them): when a chunk reached the handler, and how long it took.
      const startedAt = Date.now();
      const offset = chunk[0]!.message.offset;
      this.log.debug({ topic, partition, offset, events: chunk.length }, 'chunk received');
      const spans = startChunkSpans(chunk, topic, partition, this.options.groupId);
      let done = false;
      try {
        done = await spans.run(() => this.handleChunk(chunk, topic, partition, isRunning, heartbeat));
      } finally {
        spans.end(done);
      }
      this.log.debug({ topic, partition, offset, events: chunk.length, ms: Date.now() - startedAt, done }, 'chunk handled');
      if (done) {
        resolveOffset(chunk[chunk.length - 1]!.message.offset);
        eventMetrics.handled.inc({ group: this.options.groupId, topic }, chunk.length);
        this.lastActivity = Date.now();
        await heartbeat();
      }
      chunk = [];
      return done;
    };
    for (const message of batch.messages) {
      const redriveFor = header(message, DLQ_HEADER.redriveGroup);
      if (redriveFor !== undefined && redriveFor !== this.options.groupId) {
        // A re-driven copy meant for another group: this one handled the original already.
        if (!(await flush())) return;
        resolveOffset(message.offset);
        continue;
      }
      let event: DeliveredEvent;
      try {
        event = this.options.codec.decode(message) as DeliveredEvent;
        event.position = { topic, partition, offset: message.offset };
      } catch (err) {
        // Not the record's fault (a writer schema not fetched): kafkajs delivers the batch again, nothing is dead-lettered.
        if (isTransient(err)) throw err;
        if (!(await flush())) return;
        await this.deadLetter(message, topic, partition, err);
        resolveOffset(message.offset);
        continue;
      }
      chunk.push({ event, message });
      if (chunk.length >= this.chunkSize && !(await flush())) return;
    }
    await flush();
  }

  /** Notes a handled offset and makes sure a commit is due within the interval. */
  #handled(topic: string, partition: number, offset: string): void {
    this.#pending.set(partitionKey(topic, partition), { topic, partition, offset: (BigInt(offset) + 1n).toString() });
    this.#scheduleCommit();
  }

  #scheduleCommit(): void {
    if (this.#commitTimer || this.stopping.signal.aborted) return;
    const wait = Math.max(0, this.#lastCommit + this.#commitEveryMs - Date.now());
    this.#commitTimer = setTimeout(() => {
      this.#commitTimer = undefined;
      void this.#commitPending();
    }, wait);
  }

  /**
   * Commits the handled offsets not committed yet, one commit at a time. A failed commit (broker
   * away, group rebalancing) is left to the next one: the offsets it carried only ever name events
   * this member handled, so a late one moves no partition past an event nobody handled.
   */
  #commitPending(): Promise<void> {
    this.#committing = this.#committing.then(async () => {
      if (this.#pending.size === 0) return;
      const offsets = [...this.#pending.values()];
      this.#pending.clear();
      this.#lastCommit = Date.now();
      try {
        await this.consumer.commitOffsets(offsets);
      } catch (err) {
        this.log.warn({ err: errorMessage(err), partitions: offsets.length }, 'offsets not committed; the next commit carries them on');
        for (const o of offsets) {
          const key = partitionKey(o.topic, o.partition);
          if (!this.#pending.has(key)) this.#pending.set(key, o);
        }
        this.#scheduleCommit();
      }
    });
    return this.#committing;
  }

  private restartAfterCrash(attempt: number): void {
    const delay = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** attempt);
    this.log.warn({ err: this.lastError, attempt, delayMs: delay }, 'consumer crashed; starting it again');
    const timer = setTimeout(() => {
      if (this.stopping.signal.aborted) return;
      this.state = 'restarting';
      this.start().catch((err: unknown) => {
        this.lastError = errorMessage(err);
        this.state = 'crashed';
        this.restartAfterCrash(attempt + 1);
      });
    }, delay);
    this.stopping.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  }

  /** Where to read a partition from next; only once running (e.g. from a GROUP_JOIN listener). */
  seek(topic: string, partition: number, offset: string): void {
    this.consumer.seek({ topic, partition, offset });
  }

  /**
   * Finishes the chunk in hand, commits what succeeded and leaves the group, within `timeoutMs`
   * whatever Kafka's state: with the broker gone, leaving would retry forever, and a process that
   * hangs in shutdown can rejoin later and sit on partitions it never processes.
   */
  async stop(timeoutMs = 5000): Promise<void> {
    this.stopping.abort();
    this.state = 'stopped';
    clearTimeout(this.#commitTimer);
    this.#commitTimer = undefined;
    const deadline = Date.now() + timeoutMs;
    // kafkajs drops commits once it is stopping: the chunks in hand finish, their offsets go out, then
    // it leaves. Each step gets what is left of the time; leaving is asked for in any case, since it
    // also ends a commit kafkajs keeps retrying against a broker that is away.
    await within(Promise.allSettled([...this.#batches]), deadline);
    if (this.#commitEveryMs > 0) await within(this.#commitPending(), deadline);
    const left = await within(this.consumer.disconnect(), deadline);
    if (!left) this.log.warn({ timeoutMs }, 'consumer did not leave its group in time; the broker will expire its session');
  }

  health(now = Date.now()): ConsumerHealth {
    const idleMs = now - this.lastActivity;
    const base = { group: this.options.groupId, state: this.state, idleMs };
    const problem = (text: string): ConsumerHealth => ({ ...base, ok: false, problem: text });
    switch (this.state) {
      case 'stopped':
        return problem('stopped');
      case 'crashed':
        return problem(`crashed: ${this.lastError ?? 'unknown error'}`);
      case 'starting':
        return now - this.startedAt > JOIN_GRACE_MS ? problem('has not joined its group') : { ...base, ok: true };
      default:
        break;
    }
    if (this.blockedSince !== undefined && now - this.blockedSince > BLOCKED_REPORT_MS) {
      return problem(`waiting for a dependency: ${this.lastError ?? 'unknown error'}`);
    }
    // A fetch answers within maxWaitTimeInMs; one that does not is kafkajs retrying a broker it cannot reach.
    if (this.state === 'joined' && this.fetchingSince !== undefined && now - this.fetchingSince > BLOCKED_REPORT_MS) {
      return problem(`waiting for Kafka: a fetch unanswered for ${Math.round((now - this.fetchingSince) / 1000)} s`);
    }
    if (idleMs > this.stallMs) return problem(`stalled: no fetch, heartbeat or progress for ${Math.round(idleMs / 1000)} s`);
    if (this.state === 'restarting') return problem(`restarting after: ${this.lastError ?? 'unknown error'}`);
    return { ...base, ok: true };
  }

  /**
   * Fetches the batch's unknown writer schemas, waiting a registry outage out (heartbeating, as a
   * handler's dependency outage is): a record is never dead-lettered because the registry was away.
   * Returns false when the runner stops first.
   */
  private async prepare(messages: readonly KafkaMessage[], isRunning: () => boolean, heartbeat: () => Promise<void>): Promise<boolean> {
    let delay = this.backoff.initialMs;
    for (;;) {
      try {
        await this.options.codec.prepare(messages);
        return true;
      } catch (err) {
        this.lastError = errorMessage(err);
        this.blockedSince ??= Date.now();
        this.log.warn({ err: this.lastError }, 'writer schemas not fetched; retrying');
        if (!isRunning() || this.stopping.signal.aborted) return false;
        await sleep(delay, this.stopping.signal);
        if (this.stopping.signal.aborted) return false;
        await heartbeat().catch((hbErr: unknown) => this.log.warn({ err: errorMessage(hbErr) }, 'heartbeat during retry failed'));
        delay = Math.min(delay * 2, this.backoff.maxMs);
      }
    }
  }

  /** Returns false when it gave up because the runner is stopping (nothing resolved). */
  private async handleChunk(
    chunk: readonly { event: DeliveredEvent; message: KafkaMessage }[],
    topic: string,
    partition: number,
    isRunning: () => boolean,
    heartbeat: () => Promise<void>,
  ): Promise<boolean> {
    const events = chunk.map((c) => c.event);
    const first = await this.attempt(events, topic, isRunning, heartbeat, chunk.length === 1 ? this.retries : 0);
    if (first === 'ok') return true;
    if (first === 'stopping') return false;
    if (chunk.length === 1) {
      await this.deadLetter(chunk[0]!.message, topic, partition, first.error);
      return true;
    }
    // One bad event must not hold back its neighbours: go one by one to find it.
    for (const item of chunk) {
      const result = await this.attempt([item.event], topic, isRunning, heartbeat, this.retries);
      if (result === 'stopping') return false;
      if (result !== 'ok') await this.deadLetter(item.message, topic, partition, result.error);
    }
    return true;
  }

  private async attempt(
    events: readonly DeliveredEvent[],
    topic: string,
    isRunning: () => boolean,
    heartbeat: () => Promise<void>,
    retries: number,
  ): Promise<'ok' | 'stopping' | { error: unknown }> {
    let delay = this.backoff.initialMs;
    for (let failures = 0; ; ) {
      try {
        await this.options.handler.handle(events, {
          heartbeat: async () => {
            this.lastActivity = Date.now();
            await heartbeat();
          },
          signal: this.stopping.signal,
        });
        this.blockedSince = undefined;
        return 'ok';
      } catch (err) {
        if (isPermanent(err)) return { error: err };
        const transient = isTransient(err);
        if (!transient && failures >= retries) return { error: err };
        if (!transient) failures++;
        for (const event of events) recordRetry(event, err);
        this.lastError = errorMessage(err);
        if (transient) this.blockedSince ??= Date.now();
        eventMetrics.retries.inc({ group: this.options.groupId, topic, reason: transient ? 'transient' : 'handler' });
        this.log.warn({ err: this.lastError, transient, attempt: failures, events: events.length }, 'handler failed; retrying');
        if (!isRunning() || this.stopping.signal.aborted) return 'stopping';
        await sleep(delay, this.stopping.signal);
        if (this.stopping.signal.aborted) return 'stopping';
        // A wait for a dependency can outlast the session: keep the membership, keep the partition.
        await heartbeat().catch((hbErr: unknown) => this.log.warn({ err: errorMessage(hbErr) }, 'heartbeat during retry failed'));
        delay = Math.min(delay * 2, this.backoff.maxMs);
      }
    }
  }

  private async deadLetter(message: KafkaMessage, topic: string, partition: number, err: unknown): Promise<void> {
    const headers: Record<string, string | Buffer> = {};
    for (const [k, v] of Object.entries(message.headers ?? {})) {
      const first = Array.isArray(v) ? v[0] : v;
      if (first !== undefined && k !== DLQ_HEADER.redriveGroup) headers[k] = first;
    }
    Object.assign(headers, {
      [DLQ_HEADER.error]: errorMessage(err).slice(0, 2000),
      [DLQ_HEADER.topic]: topic,
      [DLQ_HEADER.partition]: String(partition),
      [DLQ_HEADER.offset]: message.offset,
      [DLQ_HEADER.group]: this.options.groupId,
      [DLQ_HEADER.failedAt]: new Date().toISOString(),
    });
    // If even the DLQ cannot be written the runner must not move on: this throws and kafkajs
    // redelivers from the last committed offset.
    recordDeadLetter(message, topic, partition, this.options.groupId, err);
    await this.options.publisher.publishRaw([{ topic: dlqTopic(topic), key: message.key, value: message.value, headers }]);
    eventMetrics.deadLettered.inc({ group: this.options.groupId, topic });
    this.log.error({ topic, partition, offset: message.offset, err: errorMessage(err) }, 'message dead-lettered');
  }
}

/** Adapts a one-event-at-a-time function to the chunked handler interface. */
export function eachEvent(fn: (event: DeliveredEvent, context: HandlerContext) => Promise<void>): EventHandler {
  return {
    async handle(events, context) {
      for (const e of events) await inEventSpan(e, () => fn(e, context));
    },
  };
}

/** A handler of some event types only, typed by their union; events of other types pass by. */
export function eachEventOf<E extends Event>(
  types: readonly E['type'][],
  fn: (event: DeliveredEvent<E>, context: HandlerContext) => Promise<void>,
): EventHandler {
  return {
    async handle(events, context) {
      for (const e of events) if (isEventOf<DeliveredEvent<E>>(e, ...types)) await inEventSpan(e, () => fn(e, context));
    },
  };
}
