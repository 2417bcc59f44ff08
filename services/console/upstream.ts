import type { MeAnswer, SessionAnswer } from '../accounts/accounts.api.ts';
import type { VerificationAnswer } from '../accounts/email-verification-input.ts';
import type { LogoutAnswer } from '../accounts/logout.api.ts';
import type { ConnectionsAnswer, InteractionAnswer, RedirectAnswer } from '../accounts/oauth/oauth-input.ts';
import type { SsoLinkAnswer, SsoLinksAnswer } from '../accounts/sso/sso-input.ts';
import type { CheckoutAnswer } from '../billing/checkout.routes.ts';
import type { z } from 'zod';
import type { AuditAnswer } from '../audit/audit-answer.ts';
import type { runsAnswer } from '../vision/review-schemas.ts';
import type { RotateAnswer, UsageAnswer } from '../keys/keys-answers.ts';
import type { TeamAnswer, TeamsAnswer } from '../teams/team-answers.ts';
import type { RunAnswer } from '../vision/app/run-review.ts';

/**
 * The routes the console calls for the signed-in customer: the same HTTP routes (and bodies) a
 * customer's own code calls, so nothing the console shows is computed twice. Each call forwards
 * the browser's address (X-Forwarded-For), so the accounts service's per-address limits count the
 * customer, not the console (those services trust it from TRUST_PROXY's peers).
 */

export interface Answer<T> {
  status: number;
  /** The parsed body of a 2xx; undefined otherwise. */
  body: T | undefined;
  /** The service's own message on a 4xx/5xx (services never put secrets in them). */
  error: string | undefined;
  /** The service's error code on a 4xx/5xx (`{error, code}`), e.g. EXPIRED. */
  code?: string | undefined;
  retryAfter: string | null;
}

export interface UpstreamUrls {
  accountsUrl: string;
  keysUrl: string;
  ragUrl: string;
}

export interface Credentials {
  /** The account token, sent as `Authorization: Bearer`. */
  token?: string;
  /** The customer's API key, sent as `X-API-Key` (or as the bearer GET /usage reads). */
  apiKey?: string;
  /** The browser's address. */
  clientIp: string;
}

const TIMEOUT_MS = 10_000;

async function call<T>(
  url: string,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  who: Credentials,
  body?: unknown,
  bearerKey = false,
): Promise<Answer<T>> {
  const headers: Record<string, string> = { accept: 'application/json', 'x-forwarded-for': who.clientIp };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (who.token) headers.authorization = `Bearer ${who.token}`;
  if (who.apiKey) {
    if (bearerKey) headers.authorization = `Bearer ${who.apiKey}`;
    else headers['x-api-key'] = who.apiKey;
  }
  const res = await fetch(url, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  const ok = res.status >= 200 && res.status < 300;
  const message = (parsed as { error?: unknown } | undefined)?.error;
  const code = (parsed as { code?: unknown } | undefined)?.code;
  return {
    status: res.status,
    body: ok ? (parsed as T) : undefined,
    error: ok ? undefined : typeof message === 'string' ? message : `the service answered ${res.status}`,
    code: !ok && typeof code === 'string' ? code : undefined,
    retryAfter: res.headers.get('retry-after'),
  };
}

/** An HTML page another service rendered, with the policy it is served under. */
export interface HtmlAnswer {
  status: number;
  html: string;
  policy: string | null;
}

async function html(url: string, who: Credentials, body?: unknown): Promise<HtmlAnswer> {
  const res = await fetch(url, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      accept: 'text/html',
      'x-forwarded-for': who.clientIp,
      ...(who.apiKey ? { 'x-api-key': who.apiKey } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  return { status: res.status, html: await res.text(), policy: res.headers.get('content-security-policy') };
}

const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whether a string can be a run id (a UUID): anything else is not sent on. */
export const isRunId = (s: string): boolean => RUN_ID.test(s);

export interface IndexJobAnswer {
  jobId: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  collectionName: string;
  filesIndexed?: number;
  filesUnchanged?: number;
  filesSkipped?: number;
  filesRemoved?: number;
  chunks?: number;
  startedAt?: string | null;
  finishedAt?: string | null;
  durationMs?: number | null;
  error?: string;
}

export interface CollectionAnswer {
  collectionName: string;
  projectPath: string | null;
  files: number;
  chunks: number;
  indexVersion: number;
  indexedAt: string | null;
  lastJob: IndexJobAnswer | null;
}

/** Every route the console calls, bound to where the services are. */
export function upstream(urls: UpstreamUrls) {
  const { accountsUrl, keysUrl, ragUrl } = urls;
  return {
    signup: (who: Credentials, input: { email: string; password: string; name: string }) =>
      call<SessionAnswer>(`${accountsUrl}/auth/signup`, 'POST', who, input),
    login: (who: Credentials, input: { email: string; password: string }) =>
      call<SessionAnswer>(`${accountsUrl}/auth/login`, 'POST', who, input),
    ssoExchange: (who: Credentials, code: string, binding: string) =>
      call<SessionAnswer>(`${accountsUrl}/auth/sso/exchange`, 'POST', who, { code, binding }),
    ssoLinkStart: (who: Credentials, binding: string) =>
      call<{ location: string }>(`${accountsUrl}/auth/sso/link/start`, 'POST', who, { binding }),
    ssoLinkFinish: (who: Credentials, code: string, binding: string) =>
      call<SsoLinkAnswer>(`${accountsUrl}/auth/sso/link/finish`, 'POST', who, { code, binding }),
    ssoLinks: (who: Credentials) => call<SsoLinksAnswer>(`${accountsUrl}/auth/sso/links`, 'GET', who),
    ssoUnlink: (who: Credentials, id: string) => call<undefined>(`${accountsUrl}/auth/sso/links/${encodeURIComponent(id)}`, 'DELETE', who),
    me: (who: Credentials) => call<MeAnswer>(`${accountsUrl}/auth/me`, 'GET', who),
    verifyEmail: (who: Credentials, token: string) => call<VerificationAnswer>(`${accountsUrl}/auth/verify`, 'POST', who, { token }),
    resendVerification: (who: Credentials) => call<VerificationAnswer>(`${accountsUrl}/auth/verify/resend`, 'POST', who),
    changePassword: (who: Credentials, input: { currentPassword: string; newPassword: string }) =>
      call<SessionAnswer>(`${accountsUrl}/auth/password`, 'POST', who, input),
    logout: (who: Credentials) => call<LogoutAnswer>(`${accountsUrl}/auth/logout`, 'POST', who),
    logoutAll: (who: Credentials) => call<LogoutAnswer>(`${accountsUrl}/auth/logout-all`, 'POST', who),
    checkout: (who: Credentials, tier: 'pro' | 'team') => call<CheckoutAnswer>(`${accountsUrl}/billing/checkout`, 'POST', who, { tier }),
    // An assistant's OAuth authorization request (accounts/oauth): consent, and the grants it made.
    oauthRequest: (who: Credentials, uid: string) =>
      call<InteractionAnswer>(`${accountsUrl}/oauth/interactions/${encodeURIComponent(uid)}`, 'GET', who),
    oauthConsent: (who: Credentials, uid: string, apiKey: string) =>
      call<RedirectAnswer>(`${accountsUrl}/oauth/interactions/${encodeURIComponent(uid)}/consent`, 'POST', who, { apiKey }),
    oauthDeny: (who: Credentials, uid: string) =>
      call<RedirectAnswer>(`${accountsUrl}/oauth/interactions/${encodeURIComponent(uid)}/deny`, 'POST', who),
    assistants: (who: Credentials) => call<ConnectionsAnswer>(`${accountsUrl}/oauth/connections`, 'GET', who),
    disconnectAssistant: (who: Credentials, grantId: string) =>
      call<undefined>(`${accountsUrl}/oauth/connections/${encodeURIComponent(grantId)}`, 'DELETE', who),
    usage: (who: Credentials) => call<UsageAnswer>(`${keysUrl}/usage`, 'GET', who, undefined, true),
    audit: (who: Credentials, query: Record<string, string>) =>
      call<AuditAnswer>(`${keysUrl}/audit?${new URLSearchParams(query)}`, 'GET', who),
    rotate: (who: Credentials, graceSeconds: number) => call<RotateAnswer>(`${keysUrl}/keys/rotate`, 'POST', who, { graceSeconds }),
    teams: (who: Credentials) => call<TeamsAnswer>(`${keysUrl}/teams`, 'GET', who),
    team: (who: Credentials, subscriptionId: string) =>
      call<TeamAnswer>(`${keysUrl}/team?${new URLSearchParams({ subscriptionId })}`, 'GET', who),
    invite: (who: Credentials, input: { subscriptionId: string; email: string; role: 'admin' | 'member' }) =>
      call<{ invitationId: string; email: string }>(`${keysUrl}/team/invitations`, 'POST', who, input),
    withdrawInvitation: (who: Credentials, subscriptionId: string, invitationId: string) =>
      call<undefined>(
        `${keysUrl}/team/invitations/${encodeURIComponent(invitationId)}?${new URLSearchParams({ subscriptionId })}`,
        'DELETE',
        who,
      ),
    acceptInvitation: (who: Credentials, token: string) =>
      call<{ subscriptionId: string; role: string }>(`${keysUrl}/team/invitations/accept`, 'POST', who, { token }),
    requestDomainProof: (who: Credentials, body: { subscriptionId: string; domain: string; address: string }) =>
      call<{ subscriptionId: string; domain: string; address: string; expiresAt: string }>(
        `${keysUrl}/team/sso/domain-proofs`,
        'POST',
        who,
        body,
      ),
    confirmDomainProof: (who: Credentials, token: string) =>
      call<{ subscriptionId: string; domain: string; status: 'proven' }>(`${keysUrl}/team/sso/domain-proofs/confirm`, 'POST', who, {
        token,
      }),
    changeRole: (who: Credentials, subscriptionId: string, userId: string, role: 'admin' | 'member') =>
      call<{ userId: string; role: string }>(`${keysUrl}/team/members/${encodeURIComponent(userId)}/role`, 'PUT', who, {
        subscriptionId,
        role,
      }),
    removeMember: (who: Credentials, subscriptionId: string, userId: string) =>
      call<undefined>(`${keysUrl}/team/members/${encodeURIComponent(userId)}?${new URLSearchParams({ subscriptionId })}`, 'DELETE', who),
    collections: (who: Credentials) =>
      call<{ success: true; collections: CollectionAnswer[] }>(`${ragUrl}/api/rag/collections`, 'GET', who),
    setupCollection: (who: Credentials, input: { collectionName: string; projectPath: string }) =>
      call<{ success: true; projectPath: string }>(`${ragUrl}/api/rag/setup`, 'POST', who, input),
    deleteCollection: (who: Credentials, collectionName: string) =>
      call<{ success: true; deleted: true }>(`${ragUrl}/api/rag/collections/${encodeURIComponent(collectionName)}`, 'DELETE', who),
    index: (who: Credentials, collectionName: string) =>
      call<{ success: true; jobId: string }>(`${ragUrl}/api/rag/index`, 'POST', who, { collectionName }),
    runs: (who: Credentials) => call<z.output<typeof runsAnswer>>(`${ragUrl}/api/glm/runs?limit=20`, 'GET', who),
    run: (who: Credentials, runId: string) => call<RunAnswer>(`${ragUrl}/api/glm/runs/${encodeURIComponent(runId)}`, 'GET', who),
    reviewPage: (who: Credentials, runId: string) => html(`${ragUrl}/api/glm/runs/${encodeURIComponent(runId)}/report`, who),
    decide: (who: Credentials, runId: string, snapshot: string, verb: 'accept' | 'reject') =>
      call<{ success: true; decision: string; changed: boolean }>(
        `${ragUrl}/api/glm/runs/${encodeURIComponent(runId)}/snapshots/${encodeURIComponent(snapshot)}/${verb}`,
        'POST',
        who,
      ),
    /** POST /api/integration/report as HTML: a self-contained page (its policy in a meta element). */
    report: (who: Credentials, input: { projectName: string; collectionName?: string }) =>
      html(`${ragUrl}/api/integration/report`, who, { ...input, format: 'html' }),
    job: (who: Credentials, jobId: string) =>
      call<{ success: true } & IndexJobAnswer>(`${ragUrl}/api/rag/index/${encodeURIComponent(jobId)}`, 'GET', who),
  };
}

export type Upstream = ReturnType<typeof upstream>;
