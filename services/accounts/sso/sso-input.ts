import { z } from 'zod';

/** The single sign-on routes' paths and inputs (pure), for the routes and the face's document. */

export const SSO_START_PATH = '/auth/sso/start';
export const SSO_CALLBACK_PATH = '/auth/sso/callback';
export const SSO_EXCHANGE_PATH = '/auth/sso/exchange';

export const ssoStartQuery = z.object({
  email: z.string().optional().describe('The work e-mail: its domain names the team.'),
  subscriptionId: z.string().optional().describe('Or the team itself.'),
  return: z.enum(['console']).optional().describe('Where the browser lands signed in; only the console for now.'),
});
export const ssoCallbackQuery = z.object({
  code: z.string().optional(),
  state: z.string().optional(),
  error: z.string().optional(),
  iss: z.string().optional(),
});
export const ssoExchangeInput = z.object({ code: z.string({ error: 'code is required' }).min(1, { error: 'code is required' }).max(200) });
