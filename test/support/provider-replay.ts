import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Dispatcher, getGlobalDispatcher, MockAgent, setGlobalDispatcher } from 'undici';
import { FIXTURES_DIR, type JsonObject } from './lemonsqueezy.ts';

/**
 * The payment provider's API at the HTTP boundary, for tests: the provider cannot be reached from
 * here, so its recorded answers (test/fixtures/lemonsqueezy/api) are replayed by undici's MockAgent
 * as the process's global dispatcher, which Node's own fetch (the one the official SDK calls)
 * honours. Requests to the loopback (the services, Mailpit) go out as usual; anything else that
 * was not given an answer fails, so nothing reaches the internet.
 */

export const PROVIDER_ORIGIN = 'https://api.lemonsqueezy.com';

/** A recorded answer, parsed (a fresh copy each time). */
export function recorded(name: string): JsonObject {
  return JSON.parse(readFileSync(join(FIXTURES_DIR, 'api', `${name}.json`), 'utf8')) as JsonObject;
}

export interface SentToProvider {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

export interface Answer {
  status: number;
  body: JsonObject;
}

export class ProviderReplay {
  /** Every request the provider was sent, in order. */
  readonly sent: SentToProvider[] = [];
  readonly #agent = new MockAgent();
  readonly #previous: Dispatcher;

  constructor() {
    this.#previous = getGlobalDispatcher();
    this.#agent.enableNetConnect((host) => /^(127\.0\.0\.1|localhost)(:\d+)?$/.test(host));
    setGlobalDispatcher(this.#agent);
  }

  /**
   * Answers `method` on paths `path` accepts with `answer(request)`, every time until stop; an
   * answer of 'unreachable' fails the request as a network error would (no answer at all).
   */
  answer(method: string, path: (path: string) => boolean, answer: (request: SentToProvider) => Answer | 'unreachable'): void {
    this.#agent
      .get(PROVIDER_ORIGIN)
      .intercept({ method, path })
      .reply((options) => {
        const headers = Object.fromEntries(
          Object.entries((options.headers ?? {}) as Record<string, string>).map(([k, v]) => [k.toLowerCase(), String(v)]),
        );
        const text = typeof options.body === 'string' ? options.body : '';
        const request: SentToProvider = { method: options.method, path: options.path, headers, body: text ? JSON.parse(text) : null };
        this.sent.push(request);
        const given = answer(request);
        if (given === 'unreachable') throw new Error('connect ECONNREFUSED (replayed)');
        return {
          statusCode: given.status,
          data: JSON.stringify(given.body),
          responseOptions: { headers: { 'content-type': 'application/vnd.api+json' } },
        };
      })
      .persist();
  }

  async stop(): Promise<void> {
    setGlobalDispatcher(this.#previous);
    await this.#agent.close();
  }
}
