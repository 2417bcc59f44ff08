import { z } from 'zod';
import { VERIFICATION_OUTCOMES, type VerificationOutcome } from './verifications.ts';
import { METRICS, TIERS } from '../kernel/tiers.ts';
import { errorAnswer } from '../platform/http/platform-answers.ts';
import type { InvalidCode } from './assess.ts';

/**
 * What the keys routes answer: the routes type their answers with these; /validate's body is
 * written from parts (validate-answer.ts), and the e2e contract check reads it against validateAnswer.
 */

export const INVALID_CODES = [
  'NOT_FOUND',
  'MALFORMED',
  'EXPIRED',
  'DISABLED',
  'USAGE_EXCEEDED',
  'RATE_LIMITED',
] as const satisfies readonly InvalidCode[];

const quota = z.object({
  used: z.number().int(),
  limit: z.number().int().describe('-1 is unlimited'),
  remaining: z.number().int().describe('-1 is unlimited'),
});

export const refusalAnswer = z.object({ valid: z.literal(false), error: z.string(), code: z.enum(INVALID_CODES) });

export const validateAnswer = z.union([
  z.object({
    valid: z.literal(true),
    tier: z.enum(TIERS),
    customerId: z.string(),
    usage: z.object({ queries: quota, filesIndexed: quota }),
    features: z.object({
      visionRAG: z.boolean(),
      unlimitedIndexing: z.boolean(),
      unlimitedQueries: z.boolean(),
      prioritySupport: z.boolean(),
    }),
    meteredAs: z
      .string()
      .optional()
      .describe(
        "a team member's key, or a key that replaced another: the key hash the subscription's month is counted under (its first key's), which gates meter against",
      ),
    memberUserId: z
      .string()
      .optional()
      .describe("a team member's own key only: the member's account, which gates record as who acted (the audit log)"),
  }),
  refusalAnswer,
]);

/** A body /validate cannot read: its field's problem (the schema's), or JSON it cannot parse. */
export const validateBadRequest = z.union([z.object({ valid: z.literal(false), error: z.string() }), errorAnswer]);

const counts = z.object(Object.fromEntries(METRICS.map((m) => [m, z.number().int()])) as Record<(typeof METRICS)[number], z.ZodNumber>);

export const usageAnswer = z.object({
  tier: z.enum(TIERS),
  usage: counts.describe(
    "The subscription's use this month, by all its keys: the keys a rotation replaced and its team members' keys count too. A key made by POST /generate is a subscription of its own.",
  ),
  limits: counts.describe('-1 is unlimited'),
  resetDate: z.string().describe('When the monthly counts start again (ISO 8601).'),
  requestsPerMinute: z.number().int().optional().describe('The rate limit that applies to this key: its own, or its tier’s.'),
  verifications: z
    .array(
      z.object({
        day: z.string().describe('UTC day, YYYY-MM-DD.'),
        outcomes: z.object(
          Object.fromEntries(VERIFICATION_OUTCOMES.map((o) => [o, z.number().int()])) as Record<VerificationOutcome, z.ZodNumber>,
        ),
      }),
    )
    .optional()
    .describe('This key’s verifications this month per UTC day and outcome (days without any left out; counted within seconds).'),
  key: z
    .object({
      last4: z.string().nullable(),
      createdAt: z.string().nullable().describe('When this key was made (ISO 8601).'),
      expiresAt: z.string().nullable().describe('When it stops working; null: never.'),
    })
    .optional()
    .describe('This key itself: never the key, only its last four characters and dates.'),
});

export const reserveAnswer = z.union([
  z.object({
    reserved: z.literal(true),
    reservation: z.string().nullable().describe('null: nothing to hold (unlimited, or an amount of 0).'),
  }),
  z.object({ reserved: z.literal(false), code: z.enum(INVALID_CODES), error: z.string() }),
]);

export const rotateAnswer = z.object({
  rotated: z.literal(true),
  subscriptionId: z.string(),
  replacedLast4: z.string().nullable(),
  last4: z.string(),
  delivery: z.literal('email').describe('The new key is sent to the subscription’s address, never in this answer.'),
  createdAt: z.string(),
  expiresAt: z.string().nullable().describe('When the new key stops working; null: never.'),
  replacedValidUntil: z
    .string()
    .nullable()
    .describe('Until when the replaced key keeps working beside the new one; null: it stopped at once.'),
});

export const generateAnswer = z.object({
  apiKey: z.string().describe('The key, shown only here.'),
  tier: z.enum(TIERS),
  customerId: z.string(),
  subscriptionId: z.string(),
  createdAt: z.string(),
  expiresAt: z.string().nullable().describe('When the key stops working; null: never.'),
});

export const limitsAnswer = z.object({
  subscriptionId: z.string(),
  last4: z.string().nullable(),
  requestsPerMinute: z.number().int().nullable().describe('The key’s own limit; null: the tier’s.'),
  tierRequestsPerMinute: z.number().int().describe('The tier’s limit, the ceiling.'),
});

export const revokeAnswer = z.object({ revoked: z.literal(true), subscriptionId: z.string(), last4: z.string().nullable() });

export type UsageAnswer = z.output<typeof usageAnswer>;
export type RotateAnswer = z.output<typeof rotateAnswer>;
export type GenerateAnswer = z.output<typeof generateAnswer>;
export type RevokeAnswer = z.output<typeof revokeAnswer>;
export type LimitsAnswer = z.output<typeof limitsAnswer>;
export type ReserveAnswer = z.output<typeof reserveAnswer>;
