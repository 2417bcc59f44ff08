import { z } from 'zod';
import { INVALID_MESSAGES, type Assessment, type InvalidCode } from './assess.ts';
import { METRICS, TIERS, limitsOf, type Metric, type Tier } from '../kernel/tiers.ts';
import type { LimitDecision, ValidationOutcome, ValidationRequest } from './validator.ts';

export const validateInput = z.object({
  apiKey: z.string({ error: 'apiKey is required' }).min(1, { error: 'apiKey is required' }),
  metric: z.enum(METRICS as [Metric, ...Metric[]]).optional(),
  amount: z.number().int().min(1).max(10_000).optional(),
});

/** What POST /validate answers: a status, the rate limit that applied, and the JSON body as text. */
export interface ValidateAnswer {
  status: number;
  rate: LimitDecision | null;
  body: string;
  /** The body's length in bytes, when it was measured once for many answers. */
  bytes?: number;
}

/** The validation POST /validate asks for, from its parsed JSON body. */
export type ValidateInput = { ok: true; apiKey: string; request: Omit<ValidationRequest, 'ip'> } | { ok: false; answer: ValidateAnswer };

/**
 * Reads a /validate body. The usual body, `{"apiKey": "..."}` alone, is taken without the schema
 * (the hot path); anything else goes through it, for the same 400 messages as always.
 */
export function readValidateInput(body: unknown): ValidateInput {
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const apiKey = (body as { apiKey?: unknown }).apiKey;
    let fields = 0;
    for (const _ in body) fields++;
    if (fields === 1 && typeof apiKey === 'string' && apiKey.length > 0 && Object.hasOwn(body, 'apiKey'))
      return { ok: true, apiKey, request: {} };
  }
  const parsed = validateInput.safeParse(body);
  if (!parsed.success) {
    return {
      ok: false,
      answer: {
        status: 400,
        rate: null,
        body: JSON.stringify({ valid: false, error: parsed.error.issues[0]?.message ?? 'invalid request body' }),
      },
    };
  }
  const { apiKey, metric, amount } = parsed.data;
  return { ok: true, apiKey, request: { ...(metric ? { metric } : {}), ...(amount ? { amount } : {}) } };
}

const PLAIN_OPEN = Buffer.from('{"apiKey":"');
const PLAIN_CLOSE = Buffer.from('"}');
const PLAIN_REQUEST: Omit<ValidationRequest, 'ip'> = Object.freeze({});

/**
 * The usual body, `{"apiKey":"…"}` written compactly with a key of printable ASCII and no escapes,
 * read from its bytes: exactly what JSON.parse and readValidateInput make of it, without decoding the
 * body to a string, building the object and counting its fields (issue 37). Undefined for any other
 * body, which takes that path.
 */
export function plainKeyBody(body: Buffer): ValidateInput | undefined {
  const end = body.length - PLAIN_CLOSE.length;
  if (end <= PLAIN_OPEN.length) return undefined;
  for (let i = 0; i < PLAIN_OPEN.length; i++) if (body[i] !== PLAIN_OPEN[i]) return undefined;
  if (body[end] !== PLAIN_CLOSE[0] || body[end + 1] !== PLAIN_CLOSE[1]) return undefined;
  for (let i = PLAIN_OPEN.length; i < end; i++) {
    const c = body[i]!;
    // Printable ASCII only; a quote would end the string, a backslash starts an escape.
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return undefined;
  }
  return { ok: true, apiKey: body.toString('latin1', PLAIN_OPEN.length, end), request: PLAIN_REQUEST };
}

// The parts of every answer that depend only on the tier or the refusal, written once.
const FEATURES_JSON = new Map<Tier, string>(TIERS.map((t) => [t, JSON.stringify(limitsOf(t).features)]));
const TIER_JSON = new Map<Tier, string>(TIERS.map((t) => [t, JSON.stringify(t)]));
const REFUSALS = new Map<InvalidCode, string>(
  (Object.keys(INVALID_MESSAGES) as InvalidCode[]).map((code) => [
    code,
    JSON.stringify({ valid: false, error: INVALID_MESSAGES[code], code }),
  ]),
);

/**
 * The body for an assessment, byte for byte what `res.json()` of
 * `{valid, tier, customerId, usage: {queries, filesIndexed}, features}` (or `{valid, error, code}`)
 * wrote, without building and serialising that object on every request.
 */
export function answerOf({ result, rate }: ValidationOutcome): ValidateAnswer {
  if (!result.valid)
    return { status: result.code === 'RATE_LIMITED' ? 429 : 200, rate, body: REFUSALS.get(result.code) ?? refusal(result) };
  // A frozen assessment is shared by every verification of the key until its record or usage
  // changes (held-assessments.ts): its body is written once, not per request.
  if (!Object.isFrozen(result)) return { status: 200, rate, body: validBody(result) };
  let written = WRITTEN.get(result);
  if (written === undefined) {
    const body = validBody(result);
    written = { body, bytes: Buffer.byteLength(body) };
    WRITTEN.set(result, written);
  }
  return { status: 200, rate, body: written.body, bytes: written.bytes };
}

const WRITTEN = new WeakMap<Assessment, { body: string; bytes: number }>();

function validBody(result: Extract<Assessment, { valid: true }>): string {
  const { queries, filesIndexed } = result.usage;
  return (
    `{"valid":true,"tier":${TIER_JSON.get(result.identity.tier) ?? JSON.stringify(result.identity.tier)},"customerId":${JSON.stringify(result.identity.customerId)},` +
    `"usage":{"queries":{"used":${queries.used},"limit":${queries.limit},"remaining":${queries.remaining}},` +
    `"filesIndexed":{"used":${filesIndexed.used},"limit":${filesIndexed.limit},"remaining":${filesIndexed.remaining}}},` +
    `"features":${FEATURES_JSON.get(result.identity.tier) ?? JSON.stringify(result.features)}` +
    // A team member's key: the hash of the team key its uses count against, for gates that meter remotely.
    `${result.identity.sharesQuota ? `,"meteredAs":${JSON.stringify(result.identity.keyHash)}` : ''}` +
    // A team member's own key: whose it is, so a remote gate records the member as who acted.
    `${result.identity.memberUserId ? `,"memberUserId":${JSON.stringify(result.identity.memberUserId)}` : ''}}`
  );
}

function refusal(result: Extract<Assessment, { valid: false }>): string {
  return JSON.stringify({ valid: false, error: result.error, code: result.code });
}

/** The X-RateLimit-* headers (and Retry-After on a refusal) of a decision, as name/value pairs. */
export function rateHeaders(rate: LimitDecision | null, now = Date.now()): [string, string][] {
  if (!rate) return [];
  const headers: [string, string][] = [
    ['X-RateLimit-Limit', String(rate.limit)],
    ['X-RateLimit-Remaining', remainingOf(rate)],
    ['X-RateLimit-Reset', resetOf(rate)],
  ];
  if (!rate.allowed) headers.push(['Retry-After', retryAfterOf(rate, now)]);
  return headers;
}

/**
 * The lean route's whole header list, flat (name, value, name, value), as node:http's writeHead
 * takes it: its own three headers, then rateHeaders()'s. One array literal per allowed answer, not
 * pair arrays joined into a list that grows: less garbage on the hot path (issue 37). A refusal,
 * rare, grows it by Retry-After.
 */
export function answerHead(requestId: string, contentLength: number, rate: LimitDecision | null, now = Date.now()): string[] {
  const length = String(contentLength);
  if (!rate) return ['Content-Type', JSON_UTF8, 'Content-Length', length, 'X-Request-Id', requestId];
  const head = [
    'Content-Type',
    JSON_UTF8,
    'Content-Length',
    length,
    'X-Request-Id',
    requestId,
    'X-RateLimit-Limit',
    String(rate.limit),
    'X-RateLimit-Remaining',
    remainingOf(rate),
    'X-RateLimit-Reset',
    resetOf(rate),
  ];
  if (!rate.allowed) head.push('Retry-After', retryAfterOf(rate, now));
  return head;
}

const JSON_UTF8 = 'application/json; charset=utf-8';
const remainingOf = (rate: LimitDecision): string => String(Math.max(0, rate.remaining));
const resetOf = (rate: LimitDecision): string => String(Math.ceil(rate.resetAt / 1000));
// Never "come back at once", even once the reset has passed.
const retryAfterOf = (rate: LimitDecision, now: number): string => String(Math.max(1, Math.ceil((rate.resetAt - now) / 1000)));
