import { csrfField, field, h, page, type Frame } from './layout.ts';

/**
 * The page an invitation e-mail links to, /team/join?token=… (pure). Signed out, it asks the
 * visitor to log in or sign up with the invited address, and its forms carry this page's own path
 * in `next`, so the log-in or sign-up comes back here: the token is in no other URL (the sign-up
 * variant is this page again, `&account=new`). Signed in, it offers the join button; what the keys
 * service refuses is said in the console's words (team-refusals.ts).
 */

const TITLE = 'Join a team';
const joinPath = (token: string, extra: Record<string, string> = {}) => `/team/join?${new URLSearchParams({ token, ...extra })}`;
const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${h(value)}">`;

export interface SignedOutJoinView {
  token: string;
  /** The pre-session's CSRF token: the forms post to /login and /signup. */
  csrf: string;
  /** Show the sign-up form instead of the log-in form. */
  newAccount: boolean;
}

export function joinSignedOutPage(view: SignedOutJoinView): string {
  const next = hidden('next', joinPath(view.token));
  const intro =
    "<p>You are invited to a team workspace on svc. Members get an API key of their own under the team's subscription and share its quota.</p>";
  const form = view.newAccount
    ? `<section aria-labelledby="account"><h2 id="account">First, create your account</h2>
<p>Use the e-mail address the invitation was sent to. Then you come back here to join.</p>
<form method="post" action="/signup" class="stack">
${csrfField(view.csrf)}${next}
${field({ name: 'name', label: 'Name', autocomplete: 'name', required: true, maxlength: 100 })}
${field({ name: 'email', label: 'E-mail', type: 'email', autocomplete: 'email', required: true, hint: 'The address the invitation was sent to.' })}
${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'new-password', required: true, minlength: 8, hint: 'At least 8 characters.' })}
<button type="submit">Create account</button>
</form></section>
<p>Have an account with that address already? <a href="${h(joinPath(view.token))}">Log in instead</a>.</p>`
    : `<section aria-labelledby="account"><h2 id="account">First, log in</h2>
<p>Log in with the e-mail address the invitation was sent to. Then you come back here to join.</p>
<form method="post" action="/login" class="stack">
${csrfField(view.csrf)}${next}
${field({ name: 'email', label: 'E-mail', type: 'email', autocomplete: 'email', required: true, hint: 'The address the invitation was sent to.' })}
${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', required: true })}
<button type="submit">Log in</button>
</form></section>
<p>No svc account with that address yet? <a href="${h(joinPath(view.token, { account: 'new' }))}">Create an account</a>.</p>`;
  return page({ title: TITLE, path: '/team/join' }, `${intro}\n${form}`);
}

export function joinSignedInPage(view: { signedIn: NonNullable<Frame['signedIn']>; email: string; token: string }): string {
  return page(
    { title: TITLE, path: '/team/join', signedIn: view.signedIn },
    `<p>You are invited to a team workspace on svc. Joining gives you an API key of your own under the team's subscription, sent to you by e-mail; your uses count on the team's quota.</p>
<p>You are logged in as <strong>${h(view.email)}</strong>: the invitation must be for this address.</p>
<form method="post" action="/team/join" class="stack">
${csrfField(view.signedIn.csrf)}${hidden('token', view.token)}
<button type="submit">Join the team</button>
</form>`,
  );
}

/** An invitation that cannot be used: why, and what to do. */
export function joinRefusedPage(view: { signedIn?: Frame['signedIn']; text: string }): string {
  return page(
    { title: 'This invitation cannot be used', path: '/team/join', ...(view.signedIn ? { signedIn: view.signedIn } : {}) },
    `<p data-refusal>${h(view.text)}</p><p><a href="${view.signedIn ? '/team' : '/login'}">${view.signedIn ? 'Your teams' : 'Log in'}</a></p>`,
  );
}
