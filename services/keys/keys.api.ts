import { z } from 'zod';
import type { ApiFace, ApiOperation, ApiResponse } from '../platform/http/openapi.ts';
import { errorAnswer } from '../platform/http/platform-answers.ts';
import { VERSION } from '../platform/version.ts';
import { auditAnswer } from '../audit/audit-answer.ts';
import { auditQuery } from '../audit/audit-query.ts';
import { generateInput } from './generate.routes.ts';
import { accountInput } from './key-owner.ts';
import { rotateOptions } from './key-lifetime.ts';
import { limitsOptions } from './limits.routes.ts';
import {
  generateAnswer,
  limitsAnswer,
  refusalAnswer,
  reserveAnswer,
  revokeAnswer,
  rotateAnswer,
  usageAnswer,
  validateAnswer,
  validateBadRequest,
} from './keys-answers.ts';
import { releaseInput, reserveInput } from './reserve.routes.ts';
import { acceptInput, inviteInput, roleInput, scopeInput } from '../teams/team.routes.ts';
import { invitationAnswer, joinedAnswer, roleAnswer, teamAnswer, teamsAnswer } from '../teams/team-answers.ts';
import { revokeInput } from './revoke.routes.ts';
import { SSO_CONFIG_OPERATIONS } from '../teams/sso-config.api.ts';
import { validateInput } from './validate-answer.ts';

/** The keys faces' documents: the public one, and the back office on ADMIN_PORT. */

const error = (description: string, headers?: readonly string[]): ApiResponse => ({
  description,
  schema: errorAnswer,
  ...(headers ? { headers } : {}),
});
const RATE = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'] as const;

const PUBLIC_OPERATIONS: readonly ApiOperation[] = [
  {
    method: 'post',
    path: '/validate',
    summary: 'Validate an API key',
    description:
      'Whether the key is valid, its tier, usage and features; with metric/amount, whether that use would pass the quota. A refusal is 200 with valid: false (429 when rate limited).',
    tags: ['keys'],
    body: { schema: validateInput },
    responses: {
      200: { description: 'The key and its usage, or why it is refused.', schema: validateAnswer, headers: RATE },
      400: { description: 'A body without apiKey, or not JSON.', schema: validateBadRequest },
      429: { description: 'Rate limited.', schema: refusalAnswer, headers: [...RATE, 'Retry-After'] },
    },
  },
  {
    method: 'get',
    path: '/usage',
    summary: "The key's usage this month",
    tags: ['keys'],
    security: ['bearerApiKey'],
    responses: {
      200: { description: 'Usage and limits.', schema: usageAnswer, headers: RATE },
      401: error('A missing or refused key.', ['WWW-Authenticate']),
      429: error('Rate limited.', [...RATE, 'Retry-After']),
    },
  },
  {
    method: 'post',
    path: '/reserve',
    summary: 'Hold quota for a use about to be recorded (premium servers on other hosts)',
    tags: ['keys'],
    body: { schema: reserveInput },
    responses: {
      200: { description: 'Held, or why not.', schema: reserveAnswer },
      400: error('A bad body.'),
      429: { description: 'Rate limited.', schema: reserveAnswer },
    },
  },
  {
    method: 'post',
    path: '/release',
    summary: 'Give a reservation back (its use was not served)',
    tags: ['keys'],
    body: { schema: releaseInput },
    responses: { 204: { description: 'Released.' }, 400: error('A bad body.') },
  },
  {
    method: 'post',
    path: '/keys/rotate',
    summary: "Replace a subscription's key (the new one is e-mailed)",
    description:
      'With the key itself, or with the account token and {subscriptionId}. The replaced key keeps working for graceSeconds (default KEY_ROTATION_GRACE_SECONDS; 0 after a leak).',
    tags: ['keys'],
    security: ['apiKey', 'bearerApiKey', 'accountToken'],
    body: { schema: accountInput.partial().extend(rotateOptions.shape), required: false },
    responses: {
      200: { description: 'Replaced; the new key is on its way by e-mail.', schema: rotateAnswer, headers: ['Cache-Control'] },
      400: error('A bad body.'),
      401: error('Missing or refused credentials.', ['WWW-Authenticate']),
      404: error('No such subscription of this account, or no key yet.'),
      409: error('Being replaced already, or no address to send to.'),
      429: error('Too many rotations for this subscription this hour.', ['Retry-After']),
    },
  },
  {
    method: 'post',
    path: '/keys/limits',
    summary: "Give a subscription's key a request rate of its own, under its tier's",
    description:
      'With the key itself, or with the account token and {subscriptionId}. requestsPerMinute null goes back to the tier’s. Kept across rotations; a later downgrade caps it at the new tier’s.',
    tags: ['keys'],
    security: ['apiKey', 'bearerApiKey', 'accountToken'],
    body: { schema: accountInput.partial().extend(limitsOptions.shape) },
    responses: {
      200: { description: 'Set: every process applies it within a second.', schema: limitsAnswer },
      400: error('A bad body, or a limit over the tier’s.'),
      401: error('Missing or refused credentials.', ['WWW-Authenticate']),
      404: error('No such subscription of this account, or no key yet.'),
    },
  },
];

const AUDIT_OPERATION: ApiOperation = {
  method: 'get',
  path: '/audit',
  summary: "A team's audit log, newest first",
  description:
    'Keys issued, rotated, limited and revoked, refused key checks (the first per key, code and minute), subscription changes, log-ins and password changes of the owner, single sign-ons through the team, collections set up and indexed, and the workspace’s invitations, members, roles and SSO settings. With the team key, or the account token of the owner or of a member and ?subscriptionId=. Filters: actor, action (or a family: key., team.), from, to; cursor paging.',
  tags: ['keys'],
  security: ['apiKey', 'bearerApiKey', 'accountToken'],
  query: auditQuery,
  responses: {
    200: { description: 'A page of entries within the tier’s retention.', schema: auditAnswer, headers: ['Cache-Control'] },
    400: error('A bad filter or cursor, or an account token without subscriptionId.'),
    401: error('Missing or refused credentials.', ['WWW-Authenticate']),
    403: error('The subscription’s tier has no audit log (team only).'),
    404: error('No such subscription of this account, or a workspace the account is not in.'),
  },
};

const invitationParam = z.object({ invitationId: z.string().describe('from POST /team/invitations or GET /team') });
const memberParam = z.object({ userId: z.string().describe("the member's account id (GET /team)") });
const NO_WORKSPACE = 'Not a workspace the caller owns or is a member of (whether or not it exists).';

const TEAM_OPERATIONS: readonly ApiOperation[] = [
  {
    method: 'get',
    path: '/teams',
    summary: 'The team workspaces this account owns or belongs to',
    tags: ['teams'],
    security: ['accountToken'],
    responses: {
      200: { description: 'Each workspace with the caller’s role.', schema: teamsAnswer, headers: ['Cache-Control'] },
      401: error('Missing or refused token.', ['WWW-Authenticate']),
    },
  },
  {
    method: 'get',
    path: '/team',
    summary: 'A workspace: its owner, members, their keys’ last four, and (owner and admins) pending invitations',
    tags: ['teams'],
    security: ['accountToken'],
    query: scopeInput,
    responses: {
      200: { description: 'The workspace.', schema: teamAnswer, headers: ['Cache-Control'] },
      400: error('No subscriptionId.'),
      401: error('Missing or refused token.', ['WWW-Authenticate']),
      403: error('The caller owns the subscription, but it is not on the team tier.'),
      404: error(NO_WORKSPACE),
    },
  },
  {
    method: 'post',
    path: '/team/invitations',
    summary: 'Invite someone by e-mail (owner, or admin for members)',
    description:
      'E-mails a link with a token valid TEAM_INVITATION_TTL_SECONDS (default a week). Only an account with that e-mail can accept it. A new invitation to the same address replaces the pending one. At most 30 per workspace per hour.',
    tags: ['teams'],
    security: ['accountToken'],
    body: { schema: inviteInput },
    responses: {
      201: { description: 'Invited; the e-mail is on its way.', schema: invitationAnswer, headers: ['Cache-Control'] },
      400: error('A bad body.'),
      401: error('Missing or refused token.', ['WWW-Authenticate']),
      403: error('A member, or an admin inviting an admin.'),
      404: error(NO_WORKSPACE),
      409: error('Already in the workspace, or the workspace is full.'),
      429: error('Too many invitations this hour.', ['Retry-After']),
    },
  },
  {
    method: 'delete',
    path: '/team/invitations/{invitationId}',
    summary: 'Withdraw a pending invitation (owner or admin)',
    tags: ['teams'],
    security: ['accountToken'],
    params: invitationParam,
    query: scopeInput,
    responses: {
      204: { description: 'Withdrawn: its link no longer works.' },
      401: error('Missing or refused token.', ['WWW-Authenticate']),
      403: error('A member.'),
      404: error('No such pending invitation, or not your workspace.'),
    },
  },
  {
    method: 'post',
    path: '/team/invitations/accept',
    summary: 'Accept an invitation with the token from its e-mail',
    description: 'The caller’s account e-mail must be the invited one. The member’s own API key is then e-mailed to them.',
    tags: ['teams'],
    security: ['accountToken'],
    body: { schema: acceptInput },
    responses: {
      200: { description: 'Joined (or already a member).', schema: joinedAnswer, headers: ['Cache-Control'] },
      400: error('No token, or not a token this service makes.'),
      401: error('Missing or refused token.', ['WWW-Authenticate']),
      404: error('No invitation for this account has that token.'),
      409: error('Used meanwhile, or the workspace is full.'),
      410: error('Expired, used, withdrawn, or the workspace is no longer on the team tier.'),
    },
  },
  {
    method: 'put',
    path: '/team/members/{userId}/role',
    summary: 'Make a member an admin or a member (owner)',
    tags: ['teams'],
    security: ['accountToken'],
    params: memberParam,
    body: { schema: roleInput },
    responses: {
      200: { description: 'The new role.', schema: roleAnswer, headers: ['Cache-Control'] },
      400: error('A bad body.'),
      401: error('Missing or refused token.', ['WWW-Authenticate']),
      403: error('Not the owner.'),
      404: error('No such member, or not your workspace.'),
    },
  },
  {
    method: 'delete',
    path: '/team/members/{userId}',
    summary: 'Remove a member, or leave',
    params: memberParam,
    description:
      'The member’s keys stop working within a second (every validator follows team.member-removed). Anyone may leave; admins remove members; only the owner removes an admin.',
    tags: ['teams'],
    security: ['accountToken'],
    query: scopeInput,
    responses: {
      204: { description: 'Removed.' },
      401: error('Missing or refused token.', ['WWW-Authenticate']),
      403: error('Not allowed to remove that member.'),
      404: error('No such member, or not your workspace.'),
    },
  },
];

const BACK_OFFICE_OPERATIONS: readonly ApiOperation[] = [
  {
    method: 'post',
    path: '/generate',
    summary: 'Mint a key for a subscription (operators)',
    tags: ['back office'],
    security: ['sharedSecret'],
    body: { schema: generateInput },
    responses: {
      201: { description: 'The key, shown only here.', schema: generateAnswer, headers: ['Cache-Control'] },
      400: error('A bad body.'),
      401: error('A missing or wrong shared secret.', ['WWW-Authenticate']),
      409: error('The subscription has a key.'),
    },
  },
  {
    method: 'post',
    path: '/revoke',
    summary: "Revoke a subscription's key (operators)",
    tags: ['back office'],
    security: ['sharedSecret'],
    body: { schema: revokeInput },
    responses: {
      200: { description: 'Revoked: refused everywhere within a second.', schema: revokeAnswer },
      400: error('A bad body.'),
      401: error('A missing or wrong shared secret.'),
      404: error('The subscription has no key.'),
    },
  },
];

/** The public face on KEYS_PORT; it serves the back office too when ADMIN_PORT is unset. */
export const keysApi = (options: { backOffice: boolean }): ApiFace => ({
  name: 'keys',
  title: 'svc keys',
  description: `Key validation, usage, quota reservations and key rotation${options.backOffice ? ', and the back office (/generate, /revoke: ADMIN_PORT unset)' : ''}. Every route, body and status: docs/api.md.`,
  version: VERSION,
  errorSchema: errorAnswer,
  operations: options.backOffice
    ? [...PUBLIC_OPERATIONS, AUDIT_OPERATION, ...TEAM_OPERATIONS, ...SSO_CONFIG_OPERATIONS, ...BACK_OFFICE_OPERATIONS]
    : [...PUBLIC_OPERATIONS, AUDIT_OPERATION, ...TEAM_OPERATIONS, ...SSO_CONFIG_OPERATIONS],
});

/** The back office on ADMIN_PORT (a private network). */
export const keysAdminApi: ApiFace = {
  name: 'keys-admin',
  title: 'svc keys back office',
  description: 'Minting and revoking keys with the shared secret, on ADMIN_PORT. Every route, body and status: docs/api.md.',
  version: VERSION,
  errorSchema: errorAnswer,
  operations: BACK_OFFICE_OPERATIONS,
};
