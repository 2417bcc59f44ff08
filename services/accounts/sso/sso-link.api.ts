import { z } from 'zod';
import type { ApiOperation, ApiResponse } from '../../platform/http/openapi.ts';
import { errorAnswer } from '../../platform/http/platform-answers.ts';
import {
  SSO_LINKS_PATH,
  SSO_LINK_FINISH_PATH,
  SSO_LINK_START_PATH,
  ssoLinkAnswer,
  ssoLinkFinishInput,
  ssoLinkStartAnswer,
  ssoLinkStartInput,
  ssoLinksAnswer,
} from './sso-input.ts';

/** The face's document for linking an account to its team's provider (sso-link.routes.ts). */

const error = (description: string, headers?: readonly string[]): ApiResponse => ({
  description,
  schema: errorAnswer,
  ...(headers ? { headers } : {}),
});
const badToken = error('A missing, malformed, expired, forged or revoked token.', ['WWW-Authenticate']);

export const ssoLinkOperations: readonly ApiOperation[] = [
  {
    method: 'post',
    path: SSO_LINK_START_PATH,
    summary: "Single sign-on: start linking the account to its team's provider",
    description:
      "Only the account's owner, logged in the ordinary way (its token). Answers where to send the browser: GET /auth/sso/start with a sealed ticket (five minutes) naming this account; the team is the one that proved the account address's domain, the provider must say that address (verified), and the account must be in the team. The link is recorded by POST /auth/sso/link/finish, for the browser holding the binding secret only.",
    tags: ['accounts'],
    security: ['accountToken'],
    body: { schema: ssoLinkStartInput },
    responses: {
      200: { description: 'Where the browser goes next.', schema: ssoLinkStartAnswer, headers: ['Cache-Control'] },
      400: error('A bad body.'),
      401: badToken,
    },
  },
  {
    method: 'post',
    path: SSO_LINK_FINISH_PATH,
    summary: 'Single sign-on: record a link with the code its flow ended with',
    description:
      "Called by the console from its server with the one-time code of a link flow (the callback's redirect carried it with link=1) and the browser's binding secret. Records the provider identity (iss, sub) on the account that started the link and publishes account.sso-linked. A sign-on's code is refused here, and a link's code at /auth/sso/exchange.",
    tags: ['accounts'],
    body: { schema: ssoLinkFinishInput },
    responses: {
      200: { description: 'The link.', schema: ssoLinkAnswer, headers: ['Cache-Control'] },
      400: error('A bad body.'),
      401: error('The code is unknown, expired, used, another browser’s, or its session is over (INVALID_CODE).'),
      403: error("The provider's address is not the account's (EMAIL_MISMATCH), or the account is not in the team (NOT_A_MEMBER)."),
      409: error('The identity is linked to another account (IDENTITY_TAKEN).'),
    },
  },
  {
    method: 'get',
    path: SSO_LINKS_PATH,
    summary: 'Single sign-on: the provider identities that open this account',
    tags: ['accounts'],
    security: ['accountToken'],
    responses: {
      200: { description: "The account's links.", schema: ssoLinksAnswer, headers: ['Cache-Control'] },
      401: badToken,
    },
  },
  {
    method: 'delete',
    path: `${SSO_LINKS_PATH}/{id}`,
    summary: 'Single sign-on: unlink a provider identity',
    description:
      "The team's provider no longer opens the account (account.sso-unlinked). Only a link its owner made: the identity single sign-on made the account with is its only way in.",
    tags: ['accounts'],
    security: ['accountToken'],
    params: z.object({ id: z.string().describe('The link id GET /auth/sso/links answers.') }),
    responses: {
      204: { description: 'Unlinked.' },
      401: badToken,
      404: error('No such link on this account (or one single sign-on made it with).'),
      409: error('The link changed meanwhile, or is still being recorded; retry.'),
    },
  },
];
