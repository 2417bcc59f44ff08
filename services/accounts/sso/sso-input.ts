import { z } from 'zod';

/** The single sign-on routes' paths and inputs (pure), for the routes and the face's document. */

export const SSO_START_PATH = '/auth/sso/start';
export const SSO_CALLBACK_PATH = '/auth/sso/callback';
export const SSO_EXCHANGE_PATH = '/auth/sso/exchange';

export const ssoStartQuery = z.object({
  email: z.string().optional().describe('The work e-mail: its domain names the team.'),
  subscriptionId: z.string().optional().describe('Or the team itself.'),
  return: z.enum(['console']).optional().describe('Where the browser lands signed in; only the console for now.'),
  binding: z
    .string()
    .regex(/^[\w-]{43}$/)
    .describe(
      "SHA-256 (base64url) of the secret the console keeps in this browser's cookie; the sign-on's code opens a session only with that secret.",
    ),
});
export const ssoCallbackQuery = z.object({
  code: z.string().optional(),
  state: z.string().optional(),
  error: z.string().optional(),
  iss: z.string().optional(),
});
export const ssoExchangeInput = z.object({
  code: z.string({ error: 'code is required' }).min(1, { error: 'code is required' }).max(200),
  binding: z
    .string({ error: 'binding is required' })
    .min(1, { error: 'binding is required' })
    .max(200)
    .describe('The secret whose SHA-256 the sign-on was started with (the console keeps it in the browser).'),
});
