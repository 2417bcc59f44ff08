import type { ApiOperation, ApiResponse } from '../platform/http/openapi.ts';
import { errorAnswer } from '../platform/http/platform-answers.ts';
import { ssoConfigInput, ssoRemoveInput } from './sso-config-input.ts';
import { SSO_CONFIG_PATH, ssoConfigAnswer } from './sso-config.routes.ts';

/** The team SSO configuration routes in the keys face's document (keys.api.ts spreads them in). */

const error = (description: string, headers?: readonly string[]): ApiResponse => ({
  description,
  schema: errorAnswer,
  ...(headers ? { headers } : {}),
});
const NO_WORKSPACE = 'Not a workspace the caller owns or is a member of (whether or not it exists).';
const config = (description: string): ApiResponse => ({ description, schema: ssoConfigAnswer, headers: ['Cache-Control'] });

export const SSO_CONFIG_OPERATIONS: readonly ApiOperation[] = [
  {
    method: 'get',
    path: SSO_CONFIG_PATH,
    summary: "The workspace's single sign-on (owner or admin), never its client secret",
    tags: ['teams'],
    security: ['accountToken'],
    query: ssoRemoveInput,
    responses: {
      200: config('The configuration (sso: null when none), and the redirect URI to register at the provider.'),
      400: error('No subscriptionId.'),
      401: error('Missing or refused token.', ['WWW-Authenticate']),
      403: error('A member, or the subscription is not on the team tier.'),
      404: error(NO_WORKSPACE),
    },
  },
  {
    method: 'put',
    path: SSO_CONFIG_PATH,
    summary: "Set the workspace's OpenID Connect provider (owner)",
    description:
      'The issuer must be https (http only where SSO_ALLOW_HTTP_ISSUERS is on) and is discovered before anything is recorded. The client secret is kept only encrypted. Records team.sso-configured (in the audit log).',
    tags: ['teams'],
    security: ['accountToken'],
    body: { schema: ssoConfigInput(true) },
    responses: {
      200: config('Configured.'),
      400: error('A bad body (issuer, clientId, clientSecret, 1 to 10 domains).'),
      401: error('Missing or refused token.', ['WWW-Authenticate']),
      403: error('Not the owner, or the subscription is not on the team tier.'),
      404: error(NO_WORKSPACE),
      409: error('A domain is configured by another team.'),
      422: error('The issuer could not be discovered as an OpenID Connect provider (ISSUER_NOT_DISCOVERED).'),
    },
  },
  {
    method: 'delete',
    path: SSO_CONFIG_PATH,
    summary: "Remove the workspace's single sign-on (owner)",
    description:
      'Records team.sso-removed (in the audit log); the accounts it made stay, with no usable password: they sign in again once single sign-on is configured again.',
    tags: ['teams'],
    security: ['accountToken'],
    query: ssoRemoveInput,
    responses: {
      200: config('Removed (sso: null).'),
      400: error('No subscriptionId.'),
      401: error('Missing or refused token.', ['WWW-Authenticate']),
      403: error('Not the owner.'),
      404: error(NO_WORKSPACE),
    },
  },
];
