import { csrfField, field, h, page, type Frame } from './layout.ts';

/**
 * The page a domain proof e-mail links to, /team/sso/verify?token=… (pure). Opening it confirms
 * nothing: a mail scanner that follows links must not spend the one-time link, and only the team's
 * owner, signed in, may confirm. Signed out, it offers the log-in form, whose `next` is this page's
 * own path, so the token is in no other URL.
 */

const TITLE = 'Prove a single sign-on domain';
const PATH = '/team/sso/verify';
const verifyPath = (token: string) => `${PATH}?${new URLSearchParams({ token })}`;
const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${h(value)}">`;
const INTRO =
  "<p>This link proves that a team on svc controls an e-mail domain, so that the domain's addresses sign in through the team's own identity provider. Only the team's owner can confirm it.</p>";

export function verifySignedOutPage(view: { token: string; csrf: string }): string {
  return page(
    { title: TITLE, path: PATH },
    `${INTRO}
<section aria-labelledby="account"><h2 id="account">Log in as the team's owner</h2>
<form method="post" action="/login" class="stack">
${csrfField(view.csrf)}${hidden('next', verifyPath(view.token))}
${field({ name: 'email', label: 'E-mail', type: 'email', autocomplete: 'email', required: true })}
${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', required: true })}
<button type="submit">Log in</button>
</form></section>
<p>Not the team's owner? Do not confirm: pass the link on to them, or ignore it if you do not know who asked.</p>`,
  );
}

export function verifySignedInPage(view: { signedIn: NonNullable<Frame['signedIn']>; email: string; token: string }): string {
  return page(
    { title: TITLE, path: PATH, signedIn: view.signedIn },
    `${INTRO}
<p>You are logged in as <strong>${h(view.email)}</strong>: the link must be for a team you own.</p>
<form method="post" action="${PATH}" class="stack">
${csrfField(view.signedIn.csrf)}${hidden('token', view.token)}
<button type="submit">Confirm the domain</button>
</form>`,
  );
}

/** A proof link that cannot be used: why, and what to do. */
export function verifyRefusedPage(view: { signedIn?: Frame['signedIn']; text: string }): string {
  return page(
    { title: 'This link cannot be used', path: PATH, ...(view.signedIn ? { signedIn: view.signedIn } : {}) },
    `<p data-refusal>${h(view.text)}</p><p><a href="${view.signedIn ? '/team' : '/login'}">${view.signedIn ? 'Your teams' : 'Log in'}</a></p>`,
  );
}
