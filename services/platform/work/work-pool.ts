import { Worker } from 'node:worker_threads';
import { FairQueue } from './fair-queue.ts';
import { TaskError, type Task, type TaskMessage, type TaskReply } from './task.ts';

/**
 * A task went over its budget: it ran past its time, used more than its heap, or its thread died.
 * Permanent for that input (running it again costs the same), so a job that meets it fails with
 * the reason instead of being retried.
 */
export class WorkBudgetError extends Error {
  readonly budget: 'time' | 'memory' | 'crash';

  constructor(budget: 'time' | 'memory' | 'crash', message: string) {
    super(message);
    this.name = 'WorkBudgetError';
    this.budget = budget;
  }
}

/** The tenant has its bound of tasks waiting already: shed the request (429), do not queue more. */
export class WorkQueueFull extends Error {
  constructor(pool: string) {
    super(`too much ${pool} work is waiting for this customer; try again shortly`);
    this.name = 'WorkQueueFull';
  }
}

/** The pool stopped (the service is stopping): the work was not done and may be tried again later. */
export class WorkPoolClosed extends Error {
  constructor(pool: string) {
    super(`the ${pool} pool is stopping`);
    this.name = 'WorkPoolClosed';
  }
}

export interface WorkPoolOptions {
  /** For messages and metrics: what this pool runs ("indexing", "images"). */
  readonly name: string;
  readonly threads: number;
  /** Old-generation heap of each thread; a task past it fails with WorkBudgetError('memory'). */
  readonly memoryMb: number;
  /** Default time budget of a task; a task past it has its thread ended. */
  readonly timeoutMs: number;
  /** Tasks one tenant may have waiting (not running); past it run() refuses with WorkQueueFull. */
  readonly queuePerTenant: number;
  /** Tasks one tenant may have running at once while others wait (default: every thread). */
  readonly runningPerTenant?: number;
  /** Nice value of the threads (default 10): below the request loop, which keeps the process's. */
  readonly nice?: number;
}

export interface RunOptions {
  /** Whose work this is: the unit of fairness (a customer id). */
  readonly tenant: string;
  readonly timeoutMs?: number;
  /** Aborting a waiting task removes it; aborting a running one ends its thread. */
  readonly signal?: AbortSignal;
}

interface Pending {
  readonly message: TaskMessage;
  readonly tenant: string;
  readonly timeoutMs: number;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: Error) => void;
  readonly signal: AbortSignal | undefined;
  onAbort?: () => void;
}

interface Slot {
  readonly worker: Worker;
  running: Pending | undefined;
  timer: NodeJS.Timeout | undefined;
  /** Why the pool ended this thread, so its exit is reported as that and not as a crash. */
  endedFor: Error | undefined;
}

const WORKER_URL = new URL('./worker-main.ts', import.meta.url);

/**
 * Work whose cost depends on customer input (pattern matching, parsing, embedding, image decoding)
 * runs here, on worker threads, never on the event loop that answers requests. Each task has a time
 * and heap budget enforced by ending its thread (a regex that backtracks forever is stopped
 * mid-match); waiting tasks are served round-robin per tenant, and a tenant may hold only some
 * threads while others wait. Threads start on first use and are replaced when one ends.
 */
export class WorkPool {
  readonly #options: WorkPoolOptions;
  readonly #slots: Slot[] = [];
  readonly #queue: FairQueue<Pending>;
  readonly #running = new Map<string, number>();
  #nextId = 1;
  #closed = false;

  constructor(options: WorkPoolOptions) {
    if (!Number.isInteger(options.threads) || options.threads < 1)
      throw new RangeError(`${options.name} pool: threads must be a positive integer`);
    this.#options = options;
    this.#queue = new FairQueue(options.queuePerTenant);
  }

  get name(): string {
    return this.#options.name;
  }

  /** Tasks running and waiting now, for health and metrics. */
  stats(): { running: number; waiting: number; threads: number } {
    return { running: this.#slots.filter((s) => s.running).length, waiting: this.#queue.size, threads: this.#slots.length };
  }

  run<I, O>(task: Task<I, O>, input: I, options: RunOptions): Promise<O> {
    if (this.#closed) return Promise.reject(new WorkPoolClosed(this.#options.name));
    if (options.signal?.aborted) return Promise.reject(abortReason(options.signal));
    return new Promise<O>((resolve, reject) => {
      const pending: Pending = {
        message: { id: this.#nextId++, module: task.module, name: task.name, input },
        tenant: options.tenant,
        timeoutMs: options.timeoutMs ?? this.#options.timeoutMs,
        resolve: resolve as (value: unknown) => void,
        reject,
        signal: options.signal,
      };
      if (!this.#queue.push(pending.tenant, pending)) {
        reject(new WorkQueueFull(this.#options.name));
        return;
      }
      if (pending.signal) {
        pending.onAbort = () => this.#abort(pending);
        pending.signal.addEventListener('abort', pending.onAbort, { once: true });
      }
      this.#dispatch();
    });
  }

  /** Ends every thread and refuses what waits: the work was not done (WorkPoolClosed). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const closed = new WorkPoolClosed(this.#options.name);
    for (const pending of this.#queue.drain()) this.#settle(pending, closed);
    const slots = this.#slots.splice(0);
    for (const slot of slots) this.#end(slot, closed);
    await Promise.all(slots.map((slot) => slot.worker.terminate().catch(() => undefined)));
  }

  #dispatch(): void {
    const perTenant = this.#options.runningPerTenant ?? this.#options.threads;
    while (!this.#closed && this.#queue.size > 0) {
      const slot = this.#idleSlot();
      if (!slot) return;
      const pending = this.#queue.shift((tenant) => (this.#running.get(tenant) ?? 0) >= perTenant);
      if (!pending) return; // every waiting tenant is at its share of threads
      this.#start(slot, pending);
    }
  }

  #idleSlot(): Slot | undefined {
    // A thread being ended is neither idle nor free to replace until it has exited.
    const idle = this.#slots.find((slot) => !slot.running && !slot.endedFor);
    if (idle || this.#slots.length >= this.#options.threads) return idle;
    return this.#spawn();
  }

  #spawn(): Slot {
    const worker = new Worker(WORKER_URL, {
      resourceLimits: {
        maxOldGenerationSizeMb: this.#options.memoryMb,
        maxYoungGenerationSizeMb: Math.min(64, Math.max(8, this.#options.memoryMb / 8)),
      },
      workerData: { nice: this.#options.nice ?? 10 },
      // A task's console output is not the service's log.
      stdout: true,
      stderr: true,
    });
    worker.stdout.resume();
    worker.stderr.resume();
    worker.unref();
    const slot: Slot = { worker, running: undefined, timer: undefined, endedFor: undefined };
    worker.on('message', (reply: TaskReply) => {
      const pending = slot.running;
      if (!pending || pending.message.id !== reply.id) return;
      this.#finish(slot);
      if (reply.ok) this.#settle(pending, undefined, reply.value);
      else this.#settle(pending, new TaskError(reply.error.name, reply.error.message, reply.error.code));
      this.#dispatch();
    });
    let failure: Error | undefined;
    worker.on('error', (err: Error & { code?: string }) => {
      failure =
        err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new WorkBudgetError('memory', `the ${this.#options.name} task used more than its ${this.#options.memoryMb} MB of memory`)
          : new WorkBudgetError('crash', `the ${this.#options.name} task crashed: ${err.message}`);
    });
    worker.on('exit', (code) => {
      const at = this.#slots.indexOf(slot);
      if (at >= 0) this.#slots.splice(at, 1);
      const pending = slot.running;
      this.#finish(slot);
      if (pending)
        this.#settle(
          pending,
          slot.endedFor ?? failure ?? new WorkBudgetError('crash', `the ${this.#options.name} thread exited with code ${code}`),
        );
      this.#dispatch();
    });
    this.#slots.push(slot);
    return slot;
  }

  #start(slot: Slot, pending: Pending): void {
    slot.running = pending;
    // A thread at work keeps the process alive (a CLI waiting on it); an idle one does not.
    slot.worker.ref();
    this.#running.set(pending.tenant, (this.#running.get(pending.tenant) ?? 0) + 1);
    slot.timer = setTimeout(() => {
      this.#end(slot, new WorkBudgetError('time', `the ${this.#options.name} task ran past its ${pending.timeoutMs} ms budget`));
    }, pending.timeoutMs);
    slot.worker.postMessage(pending.message);
  }

  /** Ends a thread and what it runs; the exit handler settles the task with `reason`. */
  #end(slot: Slot, reason: Error): void {
    slot.endedFor ??= reason;
    void slot.worker.terminate().catch(() => undefined);
  }

  #finish(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = undefined;
    const pending = slot.running;
    if (pending) {
      const n = (this.#running.get(pending.tenant) ?? 1) - 1;
      if (n > 0) this.#running.set(pending.tenant, n);
      else this.#running.delete(pending.tenant);
    }
    slot.running = undefined;
    slot.worker.unref();
  }

  #abort(pending: Pending): void {
    const reason = abortReason(pending.signal as AbortSignal);
    if (this.#queue.remove(pending.tenant, pending)) {
      this.#settle(pending, reason);
      return;
    }
    const slot = this.#slots.find((s) => s.running === pending);
    if (slot) this.#end(slot, reason);
  }

  #settle(pending: Pending, err: Error | undefined, value?: unknown): void {
    if (pending.onAbort) pending.signal?.removeEventListener('abort', pending.onAbort);
    if (err) pending.reject(err);
    else pending.resolve(value);
  }
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('aborted');
}
