import { csrfField, field, h, page, type Frame } from './layout.ts';

/**
 * The page the verification link opens, /verify?token=… (pure). Verifying takes the account's
 * session as well as the link, so signed out it asks for a log-in that comes back here (the token
 * is in this page's own path only); signed in, a button confirms (a POST with the CSRF token: a GET
 * never changes anything, so a link preview or a prefetch verifies nothing).
 */

const TITLE = 'Confirm your address';
const verifyPath = (token: string) => `/verify?${new URLSearchParams({ token })}`;
const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${h(value)}">`;

export function verifySignedOutPage(view: { token: string; csrf: string }): string {
  return page(
    { title: TITLE, path: '/verify' },
    `<p>To confirm your address, log in to the svc account it signed up with. Then you come back here to confirm.</p>
<form method="post" action="/login" class="stack">
${csrfField(view.csrf)}${hidden('next', verifyPath(view.token))}
${field({ name: 'email', label: 'E-mail', type: 'email', autocomplete: 'email', required: true })}
${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', required: true })}
<button type="submit">Log in</button>
</form>
<p>If you did not sign up for svc, ignore this: nothing is linked to an account whose address is not confirmed.</p>`,
  );
}

export function verifySignedInPage(view: { signedIn: NonNullable<Frame['signedIn']>; email: string; token: string }): string {
  return page(
    { title: TITLE, path: '/verify', signedIn: view.signedIn },
    `<p>You are logged in as <strong>${h(view.email)}</strong>. Confirm that this address is yours: subscriptions bought with it without logging in are then linked to this account.</p>
<form method="post" action="/verify" class="stack">
${csrfField(view.signedIn.csrf)}${hidden('token', view.token)}
<button type="submit">Confirm my address</button>
</form>`,
  );
}

/** A link that does not verify: why, in the console's words, and the way to a new one. */
export function verifyRefusedPage(view: { signedIn?: Frame['signedIn']; text: string }): string {
  return page(
    { title: 'This link cannot be used', path: '/verify', ...(view.signedIn ? { signedIn: view.signedIn } : {}) },
    `<p data-refusal>${h(view.text)}</p><p><a href="${view.signedIn ? '/account' : '/login'}">${view.signedIn ? 'Your account (send a new link)' : 'Log in'}</a></p>`,
  );
}

/** The account page's part about the address: verified, or not yet, with the resend form. */
export function addressSection(view: { emailVerified: boolean; csrf: string }): string {
  if (view.emailVerified) return '';
  return `<section class="card" aria-labelledby="address">
<h2 id="address">Address not verified</h2>
<p data-unverified>Your address is not verified yet. Until it is, a subscription bought with it without logging in waits: it is linked to this account once you confirm the link we mailed you.</p>
<form method="post" action="/account/verify/resend" class="stack">
${csrfField(view.csrf)}
<button type="submit">Resend the link</button>
</form>
</section>`;
}
