import { z } from 'zod';

/** GET /audit's answer, as its OpenAPI document states it (the route's type is this one's). */
export const auditAnswer = z.object({
  entries: z.array(
    z.object({
      entryId: z.string(),
      at: z.string().describe('ISO 8601'),
      action: z.string().describe('the event type, or key.issued / key.rotated for a key'),
      actor: z
        .string()
        .describe("account:<userId> (a team member's own key too), owner, key:…<last four>, key:<hash prefix>, provider, operator or svc"),
      target: z.string().nullable(),
      subscriptionId: z.string().nullable(),
      userId: z.string().nullable(),
      customerId: z.string().nullable(),
      details: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
    }),
  ),
  nextCursor: z.string().nullable().describe('pass as cursor for the next, older page; null on the last'),
  retentionDays: z.number().int(),
});
export type AuditAnswer = z.output<typeof auditAnswer>;
