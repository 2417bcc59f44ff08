import { z } from 'zod';
import { TIERS } from '../kernel/tiers.ts';
import type { ApiFace, ApiResponse } from '../platform/http/openapi.ts';
import { errorAnswer } from '../platform/http/platform-answers.ts';
import { VERSION } from '../platform/version.ts';
import { loginInput, passwordChangeInput, signupInput } from './credentials-input.ts';

/** What the account routes answer (accounts.routes.ts types its answers with these), and the face's document. */

export const publicUserAnswer = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  tier: z.enum(TIERS),
});

/** /auth/signup, /auth/login and /auth/password: a session token and who it is for. */
export const sessionAnswer = z.object({
  token: z.string().describe('The account token (JWT, 7 days): Authorization: Bearer <token>.'),
  user: publicUserAnswer,
});

export const meAnswer = publicUserAnswer.extend({ created_at: z.string().describe('ISO 8601.') });

export type SessionAnswer = z.output<typeof sessionAnswer>;
export type MeAnswer = z.output<typeof meAnswer>;

const error = (description: string, headers?: readonly string[]): ApiResponse => ({
  description,
  schema: errorAnswer,
  ...(headers ? { headers } : {}),
});
const limited = error('Too many attempts from this address or for this e-mail.', ['Retry-After']);
const busy = error('Kafka did not acknowledge, or too many passwords are being hashed.', ['Retry-After']);
const session = (description: string): ApiResponse => ({ description, schema: sessionAnswer, headers: ['Cache-Control'] });

export const accountsApi: ApiFace = {
  name: 'accounts',
  title: 'svc accounts',
  description: 'Sign-up, login, the account and its password. Every route, body and status: docs/api.md.',
  version: VERSION,
  errorSchema: errorAnswer,
  operations: [
    {
      method: 'post',
      path: '/auth/signup',
      summary: 'Sign up',
      tags: ['accounts'],
      body: { schema: signupInput },
      responses: {
        201: session('The account, and a token for it.'),
        400: error('A bad body.'),
        409: error('An account with this e-mail exists.'),
        429: limited,
        503: busy,
      },
    },
    {
      method: 'post',
      path: '/auth/login',
      summary: 'Log in',
      tags: ['accounts'],
      body: { schema: loginInput },
      responses: {
        200: session('A token for the account.'),
        400: error('A bad body.'),
        401: error('Wrong e-mail or password (the same answer for both).'),
        429: limited,
        503: busy,
      },
    },
    {
      method: 'get',
      path: '/auth/me',
      summary: 'The account of a token',
      tags: ['accounts'],
      security: ['accountToken'],
      responses: {
        200: { description: 'The account, with its current tier.', schema: meAnswer },
        401: error('A missing, malformed, expired, forged or revoked token.', ['WWW-Authenticate']),
      },
    },
    {
      method: 'post',
      path: '/auth/password',
      summary: 'Change the password',
      description: 'Every older token of the account is refused from then on.',
      tags: ['accounts'],
      security: ['accountToken'],
      body: { schema: passwordChangeInput },
      responses: {
        200: session('A new token (the old ones no longer work).'),
        400: error('A bad body.'),
        401: error('A bad token.', ['WWW-Authenticate']),
        403: error('The current password is wrong.'),
        409: error('The account changed meanwhile; retry.'),
        429: limited,
        503: busy,
      },
    },
  ],
};
