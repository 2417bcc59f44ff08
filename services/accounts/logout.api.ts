import { z } from 'zod';
import type { ApiOperation } from '../platform/http/openapi.ts';
import { errorAnswer } from '../platform/http/platform-answers.ts';

/** What POST /auth/logout and /auth/logout-all answer: which tokens are refused from now on. */
export const logoutAnswer = z.object({
  revoked: z.enum(['this', 'all']).describe('this: the token that asked; all: every token the account had.'),
  reason: z
    .string()
    .optional()
    .describe('Why more than the asking token was revoked (a token from before log-out named its tokens can only be refused with all).'),
});

export type LogoutAnswer = z.output<typeof logoutAnswer>;

const answer = (description: string) => ({ description, schema: logoutAnswer, headers: ['Cache-Control'] });
const badToken = {
  description: 'A missing, malformed, expired, forged or already revoked token.',
  schema: errorAnswer,
  headers: ['WWW-Authenticate'],
};
const busy = {
  description: 'The database or Kafka is unavailable (nothing changed); retry.',
  schema: errorAnswer,
  headers: ['Retry-After'],
};

export const logoutOperations: readonly ApiOperation[] = [
  {
    method: 'post',
    path: '/auth/logout',
    summary: 'Log out: this token is refused from now on',
    description:
      'Works for every account, one made by single sign-on too (no password needed). The token is refused at once by every service. A token issued before log-out existed (no jti) can only be refused with every token of the account: the answer says revoked all.',
    tags: ['accounts'],
    security: ['accountToken'],
    responses: { 200: answer('The token is refused from now on (or every token, with reason).'), 401: badToken, 503: busy },
  },
  {
    method: 'post',
    path: '/auth/logout-all',
    summary: 'Log out everywhere: every token of the account is refused from now on',
    description: 'Tokens issued afterwards (a new log-in) work. Recorded in the audit log as account.logged-out (scope all).',
    tags: ['accounts'],
    security: ['accountToken'],
    responses: { 200: answer('Every token the account had is refused from now on.'), 401: badToken, 503: busy },
  },
];
