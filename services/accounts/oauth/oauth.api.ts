import type { ApiOperation, ApiResponse } from '../../platform/http/openapi.ts';
import { errorAnswer } from '../../platform/http/platform-answers.ts';
import {
  connectionsAnswer,
  consentInput,
  grantIdParam,
  interactionAnswer,
  interactionUid,
  redirectAnswer,
  verifyAnswer,
  verifyInput,
} from './oauth-input.ts';

const error = (description: string, headers?: readonly string[]): ApiResponse => ({
  description,
  schema: errorAnswer,
  ...(headers ? { headers } : {}),
});
const badToken = error('A missing, malformed, expired, forged or revoked account token.', ['WWW-Authenticate']);

/**
 * The accounts face's OAuth routes beside the authorization server's own (oidc-provider answers
 * /oauth/authorize, /oauth/token, /oauth/register, /oauth/revoke, /oauth/jwks and
 * /.well-known/oauth-authorization-server in front of these; docs/api.md describes them).
 */
export const oauthOperations: readonly ApiOperation[] = [
  {
    method: 'get',
    path: '/oauth/interactions/:uid',
    summary: 'An authorization request waiting for consent',
    description: 'What the console’s consent page names: the client, the scopes, the resource.',
    tags: ['oauth'],
    security: ['accountToken'],
    params: interactionUid,
    responses: {
      200: { description: 'The request.', schema: interactionAnswer },
      400: error('A bad id.'),
      401: badToken,
      404: error('No such request (ended, or never was).'),
    },
  },
  {
    method: 'post',
    path: '/oauth/interactions/:uid/consent',
    summary: 'Consent: the account lets the client call the MCP server, counted against the key chosen',
    tags: ['oauth'],
    security: ['accountToken'],
    params: interactionUid,
    body: { schema: consentInput },
    responses: {
      200: { description: 'Where the browser goes on to.', schema: redirectAnswer },
      400: error('A bad body, or a key that does not work.'),
      401: badToken,
      404: error('No such request.'),
      503: error('The keys service or Kafka is unavailable.'),
    },
  },
  {
    method: 'post',
    path: '/oauth/interactions/:uid/deny',
    summary: 'The person declines: the client hears access_denied',
    tags: ['oauth'],
    security: ['accountToken'],
    params: interactionUid,
    responses: {
      200: { description: 'Where the browser goes on to.', schema: redirectAnswer },
      400: error('A bad id.'),
      401: badToken,
      404: error('No such request.'),
    },
  },
  {
    method: 'get',
    path: '/oauth/connections',
    summary: 'The assistants connected to the account',
    tags: ['oauth'],
    security: ['accountToken'],
    responses: { 200: { description: 'Newest first.', schema: connectionsAnswer }, 401: badToken },
  },
  {
    method: 'delete',
    path: '/oauth/connections/:grantId',
    summary: 'Disconnect an assistant: its grant and every token of it end at once',
    tags: ['oauth'],
    security: ['accountToken'],
    params: grantIdParam,
    responses: {
      204: { description: 'Disconnected.' },
      400: error('A bad id.'),
      401: badToken,
      404: error('No such assistant of this account.'),
    },
  },
  {
    method: 'post',
    path: '/oauth/resource/verify',
    summary: 'The MCP server asks what an access token is worth (with its proof header)',
    tags: ['oauth'],
    body: { schema: verifyInput },
    responses: {
      200: { description: 'Active (with the grant’s sealed key) or not.', schema: verifyAnswer },
      400: error('A bad body.'),
      403: error('Not the MCP server.'),
    },
  },
];
