import { z } from 'zod';
import { CHECKOUT_PATH, checkoutAnswer, checkoutInput } from '../billing/checkout.routes.ts';
import { PRICING_PATH } from '../billing/pricing/pricing.routes.ts';
import { TIERS } from '../kernel/tiers.ts';
import type { ApiFace, ApiResponse } from '../platform/http/openapi.ts';
import { errorAnswer } from '../platform/http/platform-answers.ts';
import { VERSION } from '../platform/version.ts';
import { loginInput, passwordChangeInput, signupInput } from './credentials-input.ts';
import { emailVerificationOperations } from './email-verification.api.ts';
import { logoutOperations } from './logout.api.ts';
import { oauthOperations } from './oauth/oauth.api.ts';
import { ssoLinkOperations } from './sso/sso-link.api.ts';
import {
  SSO_CALLBACK_PATH,
  SSO_EXCHANGE_PATH,
  SSO_START_PATH,
  ssoCallbackQuery,
  ssoExchangeInput,
  ssoStartQuery,
} from './sso/sso-input.ts';

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

export const meAnswer = publicUserAnswer.extend({
  created_at: z.string().describe('ISO 8601.'),
  emailVerified: z
    .boolean()
    .describe(
      'Whether the account proved its address (the link in its welcome e-mail); until then no subscription is linked to it by e-mail.',
    ),
});

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
  description: 'Sign-up, login, the account and its password; checkout and the pricing page. Every route, body and status: docs/api.md.',
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
    ...logoutOperations,
    ...oauthOperations,
    ...emailVerificationOperations,
    {
      method: 'get',
      path: SSO_START_PATH,
      summary: "Single sign-on: go to the team's OpenID Connect provider",
      description:
        "A browser route. Finds the team by the work e-mail's domain among the domains teams proved (never by a subscription id), keeps the flow (PKCE verifier, state, nonce) in a sealed HttpOnly cookie on the callback's path for 10 minutes, and redirects to the provider. Every answer is a 303 with a flow cookie (set, or deleted) and a Location: the provider, or the console's /sso/complete?error=<code> (no_team when no team proved the domain, or a refusal), so a team's existence changes nothing but where it goes.",
      tags: ['accounts'],
      query: ssoStartQuery,
      responses: {
        303: {
          description:
            "To the team's provider, with the flow cookie; or to the console's /sso/complete?error=<code> (the flow cookie deleted): no team proved the domain, a bad request, too many starts from this address, or the provider cannot be reached.",
          headers: ['Location', 'Set-Cookie', 'Cache-Control'],
        },
      },
    },
    {
      method: 'get',
      path: SSO_CALLBACK_PATH,
      summary: "Single sign-on: the provider's redirect back",
      description:
        "A browser route, the redirect URI a team registers at its provider. Checks the state against the flow cookie, redeems the code (PKCE verifier, nonce), wants the ID token's email with email_verified true and of one of the team's proven domains; opens the account its identity (iss, sub) is recorded on (made with it, and joined to the team as a member, when the address has no account; an existing account not linked to that identity is refused with not_linked, the same words whether or not an account has the address) and records account.logged-in (method sso). A link flow ends with a link code instead (link=1). Redirects to the console's /sso/complete with a one-time code, or with error=<code>.",
      tags: ['accounts'],
      query: ssoCallbackQuery,
      responses: { 303: { description: "To the console's /sso/complete?code=<one-time code> (60 s, once), or ?error=<code>." } },
    },
    {
      method: 'post',
      path: SSO_EXCHANGE_PATH,
      summary: "Single sign-on: the console's one-time code for a session token",
      description: 'Called by the console from its server. A code works once, within 60 seconds of the sign-on.',
      tags: ['accounts'],
      body: { schema: ssoExchangeInput },
      responses: {
        200: session('A token for the account that signed on.'),
        400: error('A bad body.'),
        401: error('The code is unknown, expired or already used (INVALID_CODE).'),
      },
    },
    ...ssoLinkOperations,
    {
      method: 'post',
      path: CHECKOUT_PATH,
      summary: "Start a subscription: the payment provider's checkout",
      description:
        "Creates the provider's checkout for the tier's variant (PAYMENT_VARIANT_TIERS) with the account id in its custom data, so the subscription it starts is linked to this account. The subscription exists once the provider's webhook says so.",
      tags: ['billing'],
      security: ['accountToken'],
      body: { schema: checkoutInput },
      responses: {
        201: { description: "The provider's checkout URL.", schema: checkoutAnswer, headers: ['Cache-Control'] },
        400: error('A bad body.'),
        401: error('A bad token.', ['WWW-Authenticate']),
        502: error('The provider refused to create the checkout, or answered without its URL.'),
        503: error('Checkout is not configured here (CHECKOUT_NOT_CONFIGURED), or the provider is unavailable (PROVIDER_UNAVAILABLE).', [
          'Retry-After',
        ]),
      },
    },
    {
      method: 'get',
      path: PRICING_PATH,
      summary: 'The pricing page',
      description: "The tiers, their prices and limits (the kernel's tier table), and a form that signs in and starts a checkout.",
      tags: ['billing'],
      responses: {
        200: { description: 'An HTML page (strict CSP: same-origin script and style only).', schema: z.string(), contentType: 'text/html' },
      },
    },
    {
      method: 'get',
      path: `${PRICING_PATH}.js`,
      summary: "The pricing page's script",
      description: 'Signs in or up, asks for a checkout and goes to it; the account token stays in the page.',
      tags: ['billing'],
      responses: { 200: { description: 'JavaScript.', schema: z.string(), contentType: 'text/javascript' } },
    },
    {
      method: 'get',
      path: `${PRICING_PATH}.css`,
      summary: "The pricing page's style sheet",
      tags: ['billing'],
      responses: { 200: { description: 'CSS.', schema: z.string(), contentType: 'text/css' } },
    },
  ],
};
