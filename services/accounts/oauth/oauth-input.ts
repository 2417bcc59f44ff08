import { z } from 'zod';

/** The bodies and answers of the accounts face's OAuth routes beside the provider's own. */

export const interactionUid = z.object({ uid: z.string().regex(/^[\w-]{1,64}$/) });
export const grantIdParam = z.object({ grantId: z.string().regex(/^[\w-]{1,64}$/) });

export const consentInput = z.object({
  apiKey: z.string().regex(/^svc_[A-Za-z0-9]{33}$/, { error: 'apiKey must be an svc API key' }),
});

export const interactionAnswer = z.object({
  uid: z.string(),
  client: z.object({
    id: z.string(),
    name: z.string().describe('The name the client registered, or its id when it gave none.'),
    uri: z.string().nullable(),
    redirectHost: z.string().describe('Where the browser goes back to: the host of the redirect URI.'),
  }),
  scopes: z.array(z.string()),
  resource: z.string(),
});

export const redirectAnswer = z.object({ redirectTo: z.string().describe('Where the browser goes on to (the authorization server).') });

export const connectionAnswer = z.object({
  grantId: z.string(),
  clientId: z.string(),
  clientName: z.string(),
  scopes: z.array(z.string()),
  tier: z.string(),
  keyLast4: z.string(),
  connectedAt: z.string(),
  lastUsedAt: z.string().nullable(),
});
export const connectionsAnswer = z.object({ connections: z.array(connectionAnswer) });

export const verifyInput = z.object({ token: z.string().min(1).max(4096) });
export const verifyAnswer = z.union([
  z.object({ active: z.literal(false) }),
  z.object({
    active: z.literal(true),
    accountId: z.string(),
    clientId: z.string(),
    grantId: z.string(),
    resource: z.string(),
    scopes: z.array(z.string()),
    expiresAt: z.number().describe('Unix seconds.'),
    sealedKey: z.string().describe('The subscription’s API key, sealed for the MCP server.'),
  }),
]);

export type InteractionAnswer = z.output<typeof interactionAnswer>;
export type RedirectAnswer = z.output<typeof redirectAnswer>;
export type ConnectionsAnswer = z.output<typeof connectionsAnswer>;
export type VerifyAnswer = z.output<typeof verifyAnswer>;
