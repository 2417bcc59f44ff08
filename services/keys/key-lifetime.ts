import { z } from 'zod';

/** The longest grace period a rotation may ask for: past a day, the old key is a second key, not a hand-over. */
export const MAX_GRACE_SECONDS = 86_400;

/**
 * `expiresAt`: an ISO 8601 instant in the future, at most ten years ahead (a typo such as 20255
 * would otherwise make a key that never expires in practice).
 */
export const expiresAtInput = z.iso
  .datetime({ offset: true, error: 'expiresAt must be an ISO 8601 date and time, such as 2027-01-31T00:00:00Z' })
  .transform((s) => new Date(s))
  .refine((d) => d.getTime() > Date.now(), { error: 'expiresAt must be in the future' })
  .refine((d) => d.getTime() < Date.now() + 10 * 365 * 86_400_000, { error: 'expiresAt must be within ten years' })
  .describe('When the key stops working (EXPIRED from then on). Absent: it does not expire.');

/** What a rotation may set beside whose key it is. */
export const rotateOptions = z.object({
  graceSeconds: z
    .number({ error: 'graceSeconds must be a whole number of seconds' })
    .int({ error: 'graceSeconds must be a whole number of seconds' })
    .min(0, { error: 'graceSeconds must be 0 or more' })
    .max(MAX_GRACE_SECONDS, { error: `graceSeconds must be at most ${MAX_GRACE_SECONDS}` })
    .optional()
    .describe('How long the replaced key keeps working beside the new one; 0 stops it at once. Default KEY_ROTATION_GRACE_SECONDS.'),
  expiresAt: expiresAtInput.optional(),
});
