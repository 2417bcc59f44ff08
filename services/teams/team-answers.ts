import { z } from 'zod';
import { MEMBER_ROLES } from './events.ts';
import { ssoDomainStatus } from './sso-domain-status.ts';

const iso = z.string().describe('ISO 8601');
const role = z.enum(['owner', ...MEMBER_ROLES]);

/** The team routes' answers, as their OpenAPI document states them (the routes' types are these). */
export const teamsAnswer = z.object({
  workspaces: z.array(z.object({ subscriptionId: z.string(), role })).describe('the workspaces this account owns or is a member of'),
});
export type TeamsAnswer = z.output<typeof teamsAnswer>;

export const teamAnswer = z.object({
  subscriptionId: z.string(),
  role: role.describe("the caller's role"),
  owner: z.object({ userId: z.string().nullable(), email: z.string().nullable() }),
  members: z.array(
    z.object({
      userId: z.string(),
      email: z.string(),
      role: z.enum(MEMBER_ROLES),
      via: z.enum(['invitation', 'sso']),
      joinedAt: iso,
      key: z.object({ last4: z.string(), createdAt: iso }).nullable().describe('their own key, once minted and mailed to them'),
    }),
  ),
  invitations: z
    .array(z.object({ invitationId: z.string(), email: z.string(), role: z.enum(MEMBER_ROLES), invitedAt: iso, expiresAt: iso }))
    .describe('pending and unexpired; empty for a member (only the owner and admins see them)'),
  ssoDomains: z
    .array(ssoDomainStatus)
    .describe(
      'the single sign-on domains, each pending or proven; empty without SSO and for a member (only the owner and admins see them)',
    ),
  limits: z.object({ members: z.number().int() }),
});
export type TeamAnswer = z.output<typeof teamAnswer>;

export const invitationAnswer = z.object({ invitationId: z.string(), email: z.string(), role: z.enum(MEMBER_ROLES), expiresAt: iso });
export const joinedAnswer = z.object({ subscriptionId: z.string(), role: z.enum(MEMBER_ROLES), joinedAt: iso });
export const roleAnswer = z.object({ userId: z.string(), role: z.enum(MEMBER_ROLES) });
