import { z } from 'zod';

/** The verification routes' paths, body and answer, shared by the routes and the face's document. */

export const VERIFY_PATH = '/auth/verify';
export const VERIFY_RESEND_PATH = '/auth/verify/resend';

export const verifyInput = z.object({ token: z.string({ error: 'token is required' }).max(200, { error: 'token is too long' }) });

/** What POST /auth/verify and /auth/verify/resend answer: whether the account's address is verified. */
export const verificationAnswer = z.object({
  emailVerified: z.boolean(),
  email: z.string(),
  expiresAt: z.string().optional().describe('Resend: until when the new link works (ISO 8601); the earlier link no longer does.'),
});

export type VerificationAnswer = z.output<typeof verificationAnswer>;
