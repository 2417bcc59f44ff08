import type fc from 'fast-check';
import type { BodyDraft, Encoding, Template } from './arbitraries.ts';
import type { RawRequest } from './raw-http.ts';

/**
 * The types the endpoint files share: endpoints.ts builds the table, team-endpoints.ts and
 * console-endpoints.ts add to it through an EndpointKit, and none of them imports another's table.
 */

/** The real things the fuzz suite holds, which must never show up in an answer or a log line. */
export interface FuzzContext {
  ports: { accounts: number; keys: number; webhooks: number; rag: number; mcp: number; console: number };
  jwtSecret: string;
  /** CONSOLE_SECRET: the console's CSRF tokens and sealed key cookies, made here as the console makes them. */
  consoleSecret: string;
  /** WEBHOOK_SECRET: the back office's shared secret for /generate and /revoke. */
  sharedSecret: string;
  paymentWebhookSecret: string;
  keyEncryptionKey: string;
  /** The team workspace's owner: its key is `rotatable`'s. */
  account: FuzzAccount;
  /** A member of the owner's team workspace (joined by invitation when there is a Mailpit to read it from). */
  member: FuzzAccount;
  /** An account of its own for the routes that end a session (log-out), so no other endpoint loses one. */
  leaving: FuzzAccount;
  /** An account whose address the fuzzed routes may verify, with its welcome e-mail's token ('' where nothing verifies addresses). */
  unverified: FuzzAccount & { verifyToken: string };
  /** Tickets of POST /auth/sso/link/start for the owner (five minutes each), where linking exists. */
  linkTickets: string[];
  /** An account for each route that ends its session (fuzz.ts SESSION_ENDING), by the route's name. */
  enders: Record<string, FuzzAccount>;
  team: {
    subscriptionId: string;
    /** An invitation left pending (withdrawn, maybe, by the withdraw routes). */
    pendingInvitation: string;
    /** What joining made: the invitation's token and the member's key. */
    secrets: string[];
  };
  /** A team key per endpoint that takes keys (own rate limits and quotas), and the subscription of each. */
  keys: Record<string, { apiKey: string; subscriptionId: string }>;
  /** The subscription /revoke may find (never one whose key another endpoint uses). */
  revocable: string;
  /** The subscription /keys/rotate may rotate with the account's session (owned by its e-mail). */
  rotatable: string;
  workspace: string;
  /** An indexed collection of a tiny project, so queries reach retrieval. */
  collection: string;
  jobId: string;
  /** A loopback site of image bombs the captures may reach (allow-listed), and its paths. */
  bombs: { url: string; paths: string[] };
}

export interface FuzzAccount {
  email: string;
  password: string;
  token: string;
  userId: string;
}

export type RequestDraft = RawRequest & { bodyKind: string };

export interface Endpoint {
  /** "POST /auth/login" or "GET /health (keys)": how the table names it, and part of its seed. */
  name: string;
  service: keyof FuzzContext['ports'];
  arb: fc.Arbitrary<RequestDraft>;
  /** Values a 2xx answer of this endpoint is meant to carry (a new token, a new key): not leaks. */
  issues?: (status: number, body: Buffer) => string[];
  /** At most this many in flight (the run's concurrency otherwise). */
  inFlight?: number;
  /**
   * A 5xx this endpoint answers by design, which the table does not count as one: only checkout's
   * 503 "not configured here" (the fuzz stack sells nothing: no payment provider can be reached from it).
   */
  designed?: (status: number, body: Buffer) => boolean;
}

export type Headers = [string, string][];

export interface EndpointOptions {
  template: Template;
  auth?: fc.Arbitrary<Headers>;
  limit?: number;
  path?: fc.Arbitrary<string>;
  guard?: (b: Buffer) => Buffer;
  sign?: fc.Arbitrary<(body: Buffer) => Headers>;
  /** Bodies other than JSON near the template, and how they are labelled (the console's forms). */
  body?: fc.Arbitrary<BodyDraft>;
  encoding?: fc.Arbitrary<Encoding>;
  /** At most this many in flight (e.g. a route that hashes a password). */
  inFlight?: number;
  designed?: Endpoint['designed'];
}

/** What the endpoint files (team-endpoints.ts, console-endpoints.ts) add endpoints with. */
export interface EndpointKit {
  add(name: string, service: Endpoint['service'], options: EndpointOptions, issues?: Endpoint['issues']): void;
  authArb(real: Headers[], wrongKinds: fc.Arbitrary<Headers>): fc.Arbitrary<Headers>;
  wrongAuth: fc.Arbitrary<Headers>;
  garbageToken: fc.Arbitrary<string>;
  bearer(token: string): Headers[];
  keyAuth(apiKey: string): Headers[];
  keyAuthFor(name: string): fc.Arbitrary<Headers>;
  issuedField(field: string): (status: number, body: Buffer) => string[];
  word: fc.Arbitrary<string>;
  email: fc.Arbitrary<string>;
  collectionName: fc.Arbitrary<string>;
}
