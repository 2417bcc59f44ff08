import { randomInt, randomUUID } from 'node:crypto';
import { deliver, subscriptionPayload } from '../support/lemonsqueezy.ts';

/**
 * The outside world during the faults: people signing up and the payment provider delivering
 * webhooks. Both behave as the real ones do: an answer that does not come, or a 5xx, is retried
 * with backoff until a definite answer; what was answered is recorded for the audit.
 */
export interface SignedUp {
  email: string;
  password: string;
  userId: string;
}

export interface Subscribed {
  subscriptionId: string;
  email: string;
}

export interface TrafficRecord {
  /** Sign-ups answered 201, with the account id the answer gave. */
  signedUp: SignedUp[];
  /** Subscriptions whose subscription_created webhook was answered 200. */
  subscribed: Subscribed[];
  /** Requests that got no definite answer before the deadline (a loss from the client's side). */
  gaveUp: number;
  /** Attempts that had to be retried (no answer, or 5xx). */
  retried: number;
  /** Final answers that were neither the success nor given up: what each request got, and its error code. */
  otherAnswers: { kind: 'signup' | 'webhook'; status: number; code?: string }[];
  /** What each request given up was, with the last thing it got (a status, or none). */
  gaveUpKinds: { kind: 'signup' | 'webhook'; last: string }[];
}

export interface TrafficTargets {
  /** One service's URL, or its replicas' (each attempt picks one at random, as a load balancer would). */
  accounts: string | readonly string[];
  webhooks: string | readonly string[];
  signingSecret: string;
  variant: number;
  /** Live (not test-mode) payloads, as a production deployment takes them (PAYMENT_ALLOW_TEST_MODE off). */
  live?: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** One of a service's replicas, chosen per request as a load balancer would. */
export const pickOne = (urls: readonly string[]): string => urls[randomInt(0, urls.length)] as string;
const pick = (urls: string | readonly string[]): string => (typeof urls === 'string' ? urls : pickOne(urls));

export class Traffic {
  readonly record: TrafficRecord = { signedUp: [], subscribed: [], gaveUp: 0, retried: 0, otherAnswers: [], gaveUpKinds: [] };
  readonly #targets: TrafficTargets;
  readonly #deadlineMs: number;

  constructor(targets: TrafficTargets, deadlineMs = 180_000) {
    this.#targets = targets;
    this.#deadlineMs = deadlineMs;
  }

  /** Runs `signUps` sign-ups and `webhooks` new subscriptions at about `perSecond` requests a second, `concurrency` at a time. */
  async run(options: { signUps: number; webhooks: number; perSecond: number; concurrency?: number; stop?: () => boolean }): Promise<void> {
    const tasks: (() => Promise<void>)[] = [];
    const kinds = [...Array<'signup'>(options.signUps).fill('signup'), ...Array<'webhook'>(options.webhooks).fill('webhook')];
    // Interleaved, so both kinds see every fault.
    for (let i = kinds.length - 1; i > 0; i--) {
      const j = randomInt(0, i + 1);
      [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
    }
    for (const kind of kinds) tasks.push(kind === 'signup' ? () => this.signUp() : () => this.subscribe());
    const interval = 1000 / options.perSecond;
    const started = Date.now();
    let next = 0;
    const worker = async () => {
      for (;;) {
        if (options.stop?.()) return;
        const i = next++;
        const task = tasks[i];
        if (!task) return;
        const due = started + i * interval;
        if (due > Date.now()) await sleep(due - Date.now());
        await task();
      }
    };
    await Promise.all(Array.from({ length: options.concurrency ?? 8 }, worker));
  }

  async signUp(): Promise<void> {
    const email = `faults-${randomUUID()}@example.test`;
    const password = `pw-${randomUUID()}`;
    const answer = await this.#retry('signup', async (note) => {
      const res = await fetch(`${pick(this.#targets.accounts)}/auth/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password, name: 'Fault' }),
        signal: AbortSignal.timeout(15_000),
      });
      note(String(res.status));
      if (res.status >= 500) return undefined;
      return { status: res.status, body: (await res.json()) as { user?: { id: string }; code?: string } };
    });
    if (answer?.status === 201 && answer.body.user) this.record.signedUp.push({ email, password, userId: answer.body.user.id });
    else if (answer)
      this.record.otherAnswers.push({ kind: 'signup', status: answer.status, ...(answer.body.code ? { code: answer.body.code } : {}) });
  }

  async subscribe(): Promise<void> {
    const subscriptionId = String(randomInt(100_000_000, 999_999_999));
    const email = `buyer-${randomUUID()}@example.test`;
    const payload = subscriptionPayload('subscription_created', {
      subscriptionId,
      userId: null,
      attributes: { user_email: email, variant_id: this.#targets.variant, ...(this.#targets.live ? { test_mode: false } : {}) },
      ...(this.#targets.live ? { meta: { test_mode: false } } : {}),
    });
    const status = await this.#retry('webhook', async (note) => {
      const res = await deliver(pick(this.#targets.webhooks), this.#targets.signingSecret, payload);
      note(String(res.status));
      return res.status >= 500 ? undefined : res.status;
    });
    if (status === 200) this.record.subscribed.push({ subscriptionId, email });
    else if (status !== undefined) this.record.otherAnswers.push({ kind: 'webhook', status });
  }

  /** Tries until a definite answer (undefined: none, retry), with backoff, up to the deadline. */
  async #retry<T>(kind: 'signup' | 'webhook', attempt: (note: (last: string) => void) => Promise<T | undefined>): Promise<T | undefined> {
    const deadline = Date.now() + this.#deadlineMs;
    let delay = 100;
    let last = 'no answer';
    for (;;) {
      try {
        const answer = await attempt((status) => void (last = status));
        if (answer !== undefined) return answer;
      } catch (err) {
        // no answer (refused, reset, timed out): retry like a real client
        last = `no answer (${(err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name})`;
      }
      if (Date.now() > deadline) {
        this.record.gaveUp++;
        this.record.gaveUpKinds.push({ kind, last });
        return undefined;
      }
      this.record.retried++;
      await sleep(delay);
      delay = Math.min(delay * 2, 2000);
    }
  }
}
