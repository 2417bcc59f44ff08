import type { ApiOperation, ApiResponse } from '../platform/http/openapi.ts';
import { errorAnswer } from '../platform/http/platform-answers.ts';
import { domainProofConfirmInput, domainProofInput, ssoConfigInput, ssoRemoveInput } from './sso-config-input.ts';
import { SSO_CONFIG_PATH, ssoConfigAnswer } from './sso-config.routes.ts';
import { DOMAIN_PROOFS_PATH, DOMAIN_PROOF_CONFIRM_PATH, domainProofAnswer, domainProvenAnswer } from './sso-domain-proof.routes.ts';

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
      'The issuer must be https (http only where SSO_ALLOW_HTTP_ISSUERS is on) and is discovered before anything is recorded. The client secret is kept only encrypted. Public mail domains (gmail.com, outlook.com, …) and public suffixes are refused. A domain signs on only once proven (POST /team/sso/domain-proofs); a domain still named keeps its proof across a change of provider, a domain dropped loses it. Records team.sso-configured (in the audit log).',
    tags: ['teams'],
    security: ['accountToken'],
    body: { schema: ssoConfigInput(true) },
    responses: {
      200: config('Configured.'),
      400: error('A bad body (issuer, clientId, clientSecret, 1 to 10 domains), or a public mail domain or public suffix (named).'),
      401: error('Missing or refused token.', ['WWW-Authenticate']),
      403: error('Not the owner, or the subscription is not on the team tier.'),
      404: error(NO_WORKSPACE),
      409: error('A domain is proven by another team.'),
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
  {
    method: 'post',
    path: DOMAIN_PROOFS_PATH,
    summary: 'Mail a one-time link to an address at a single sign-on domain, to prove the team controls it (owner)',
    description:
      "The domain must be one the configuration names and not yet proven. The address must be at exactly that domain; without one, the owner's own address when it is there. The link works once, for 24 hours, and only for the team's owner, signed in; asking again replaces it. Records team.sso-domain-proof-requested (the token travels only sealed, for the mailer).",
    tags: ['teams'],
    security: ['accountToken'],
    body: { schema: domainProofInput },
    responses: {
      202: { description: 'The e-mail is on its way.', schema: domainProofAnswer, headers: ['Cache-Control'] },
      400: error('A bad body, an address not at the domain (or none, and the owner is elsewhere), or a public mail domain.'),
      401: error('Missing or refused token.', ['WWW-Authenticate']),
      403: error('Not the owner, or the subscription is not on the team tier.'),
      404: error(NO_WORKSPACE),
      409: error('The domain is proven already, by this team or by another.'),
      422: error('The domain is not in the workspace’s single sign-on configuration (DOMAIN_NOT_CONFIGURED).'),
      429: error('Too many proof e-mails from this workspace this hour.', ['Retry-After']),
    },
  },
  {
    method: 'post',
    path: DOMAIN_PROOF_CONFIRM_PATH,
    summary: 'Confirm a domain proof link: the domain becomes the team’s for single sign-on (owner)',
    description:
      'The token from the e-mail’s link. Only the owner of the team the link was made for confirms it; one team per domain, the first to prove it. Records team.sso-domain-verified.',
    tags: ['teams'],
    security: ['accountToken'],
    body: { schema: domainProofConfirmInput },
    responses: {
      200: { description: 'Proven.', schema: domainProvenAnswer, headers: ['Cache-Control'] },
      400: error('No token, or not a proof token.'),
      401: error('Missing or refused token.', ['WWW-Authenticate']),
      403: error('An admin or member of the team the link is for: only its owner confirms.'),
      404: error('No proof of a team of the caller has that token (whether or not it exists).'),
      409: error('Another team has proven the domain, or it was dropped from the configuration meanwhile.'),
      410: error('Used or replaced by a newer link (USED), or expired (EXPIRED).'),
    },
  },
];
