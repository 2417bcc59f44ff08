import type { RefusalCode } from '../accounts/sso/sso-login.ts';

/**
 * What the console says when a single sign-on is refused (pure). The accounts service sends the
 * browser to /sso/complete?error=<code>; the page answers with the refusal's status and these
 * words, never anything taken from the URL, so a crafted link cannot put text on the console's page.
 */
const REFUSALS: Record<RefusalCode, { status: number; text: string }> = {
  bad_request: { status: 400, text: 'That sign-on request was malformed. Enter your work address on the log-in page.' },
  no_team: {
    status: 404,
    text: 'Single sign-on is not available for that address. Log in with your password, or ask your team’s administrator.',
  },
  provider_unavailable: { status: 502, text: "Your team's sign-in provider cannot be reached right now. Try again in a moment." },
  flow_expired: {
    status: 400,
    text: 'This sign-on was not started in this browser, or took over ten minutes. Start again from the log-in page.',
  },
  state_mismatch: { status: 400, text: 'This answer is not for the sign-on this browser started. Start again from the log-in page.' },
  provider_refused: { status: 401, text: "Your team's sign-in provider did not sign you in." },
  email_missing: { status: 403, text: "Your team's sign-in provider did not tell us your e-mail address. Ask your team's administrator." },
  email_unverified: {
    status: 403,
    text: "Your team's sign-in provider has not verified your e-mail address, so it cannot sign you in here.",
  },
  wrong_domain: { status: 403, text: "Your e-mail address is not of one of your team's domains." },
  // The same words whether or not an account has the address (sso-login.ts's notLinked).
  not_linked: {
    status: 403,
    text: "This sign-on is not linked to an svc account. If you have an account, log in the ordinary way and link your team's sign-on from your account page.",
  },
  link_mismatch: {
    status: 403,
    text: "Your team's sign-in provider signed in another address than your account's, so it was not linked. Sign in there as your account's address.",
  },
  link_not_member: {
    status: 403,
    text: "Your account is not in this team, so its sign-on was not linked. Accept your team's invitation first.",
  },
  link_taken: { status: 409, text: 'This sign-on is linked to another svc account already, so it was not linked to yours.' },
  workspace_full: { status: 409, text: 'Your team has as many members as it may have. Ask its owner.' },
  rate_limited: { status: 429, text: 'Too many sign-ons from your address. Try again in a minute.' },
  unavailable: { status: 503, text: 'Your sign-on could not be recorded right now. Try again in a moment.' },
};

export function ssoRefusal(code: string): { status: number; text: string } {
  return Object.hasOwn(REFUSALS, code)
    ? REFUSALS[code as RefusalCode]
    : { status: 400, text: 'The sign-on was refused. Start again from the log-in page.' };
}
