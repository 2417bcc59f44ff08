import { z } from 'zod';

/** The single sign-on routes' paths and inputs (pure), for the routes and the face's document. */

export const SSO_START_PATH = '/auth/sso/start';
export const SSO_CALLBACK_PATH = '/auth/sso/callback';
export const SSO_EXCHANGE_PATH = '/auth/sso/exchange';
export const SSO_LINK_START_PATH = '/auth/sso/link/start';
export const SSO_LINK_FINISH_PATH = '/auth/sso/link/finish';
export const SSO_LINKS_PATH = '/auth/sso/links';

const bindingHash = z
  .string()
  .regex(/^[\w-]{43}$/)
  .describe(
    "SHA-256 (base64url) of the secret the console keeps in this browser's cookie; the sign-on's code opens a session (or records a link) only with that secret.",
  );

/** No subscription id: a team is found only by a proven domain of the address, never by its id (enumerable). */
export const ssoStartQuery = z.object({
  email: z.string().max(320).optional().describe('The work e-mail: its domain names the team, among the domains teams proved.'),
  link: z
    .string()
    .max(2000)
    .optional()
    .describe("Instead of email: the ticket POST /auth/sso/link/start gave, to link the logged-in account to its team's provider."),
  return: z.enum(['console']).optional().describe('Where the browser lands signed in; only the console for now.'),
  binding: bindingHash,
});
export const ssoLinkStartInput = z.object({ binding: bindingHash });
export const ssoLinkStartAnswer = z.object({
  location: z.string().describe("Where to send the browser: GET /auth/sso/start with this link's ticket (five minutes)."),
});
export const ssoLinkFinishInput = z.object({
  code: z.string({ error: 'code is required' }).min(1, { error: 'code is required' }).max(200),
  binding: z.string({ error: 'binding is required' }).min(1, { error: 'binding is required' }).max(200),
});
export const ssoLinkAnswer = z.object({
  id: z.string().describe('The link (what DELETE /auth/sso/links/{id} takes).'),
  issuer: z.string(),
  subscriptionId: z.string().describe('The team whose provider it is.'),
  via: z
    .enum(['made', 'link'])
    .describe('made: single sign-on made the account with it (it cannot be unlinked); link: linked by its owner.'),
  linkedAt: z.string().describe('ISO 8601.'),
});
export const ssoLinksAnswer = z.object({ links: z.array(ssoLinkAnswer) });
export type SsoLinkAnswer = z.output<typeof ssoLinkAnswer>;
export type SsoLinksAnswer = z.output<typeof ssoLinksAnswer>;
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
