import { csrfField, field, h, page, type Frame } from './layout.ts';

/**
 * The sign-up and log-in pages (pure). The e-mail typed is kept on an error; a password never is.
 * `next` (a console path, checked by safe-next.ts) is where the customer goes once in.
 */

const nextField = (next: string | undefined) => (next ? `<input type="hidden" name="next" value="${h(next)}">` : '');
// A link carries `next` only without a query: a query may hold a secret (an invitation's token), which
// goes into no other URL than its own page's; the forms carry it in their bodies.
const withNext = (path: string, next: string | undefined) =>
  next && !next.includes('?') ? `${path}?${new URLSearchParams({ next })}` : path;

export function signupPage(view: { csrf: string; email?: string; name?: string; next?: string; notice?: Frame['notice'] }): string {
  return page(
    { title: 'Create your account', path: '/signup', ...(view.notice ? { notice: view.notice } : {}) },
    `<p>Every account starts on the free tier. Choose a paid tier afterwards on the pricing page; your API key arrives by e-mail once you have paid.</p>
<form method="post" action="/signup" class="stack">
${csrfField(view.csrf)}${nextField(view.next)}
${field({ name: 'name', label: 'Name', autocomplete: 'name', required: true, maxlength: 100, ...(view.name ? { value: view.name } : {}) })}
${field({ name: 'email', label: 'E-mail', type: 'email', autocomplete: 'email', required: true, ...(view.email ? { value: view.email } : {}) })}
${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'new-password', required: true, minlength: 8, hint: 'At least 8 characters.' })}
<button type="submit">Create account</button>
</form>
<p>Have an account already? <a href="${h(withNext('/login', view.next))}">Log in</a>.</p>`,
  );
}

export function loginPage(view: { csrf: string; email?: string; ssoEmail?: string; next?: string; notice?: Frame['notice'] }): string {
  return page(
    { title: 'Log in', path: '/login', ...(view.notice ? { notice: view.notice } : {}) },
    `<form method="post" action="/login" class="stack">
${csrfField(view.csrf)}${nextField(view.next)}
${field({ name: 'email', label: 'E-mail', type: 'email', autocomplete: 'email', required: true, ...(view.email ? { value: view.email } : {}) })}
${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', required: true })}
<button type="submit">Log in</button>
</form>
<section aria-labelledby="sso-heading">
<h2 id="sso-heading">Log in with your team's SSO</h2>
<form method="post" action="/login/sso" class="stack">
${csrfField(view.csrf)}${nextField(view.next)}
${field({ name: 'ssoEmail', label: 'Work address', type: 'email', autocomplete: 'email', required: true, hint: "The e-mail address your team's sign-in provider knows you by.", ...(view.ssoEmail ? { value: view.ssoEmail } : {}) })}
<button type="submit">Continue with SSO</button>
</form>
</section>
<p>New here? <a href="${h(withNext('/signup', view.next))}">Create an account</a>.</p>`,
  );
}

/** On the way to the team's provider (the accounts service's /auth/sso/start) or, signed in, to the account page. */
export function goingOnPage(view: { title: string; text: string; to: string; linkText: string }): string {
  return page(
    { title: view.title, path: '', goTo: view.to },
    `<p>${h(view.text)}</p><p><a href="${h(view.to)}">${h(view.linkText)}</a></p>`,
  );
}

/** What a failure looks like to the customer: the status line and the service's own message, never a stack or a secret. */
export function errorPage(view: { status: number; message: string; requestId?: string; signedIn?: Frame['signedIn'] }): string {
  const reference = view.requestId ? `<p>Reference: <code>${h(view.requestId)}</code></p>` : '';
  return page(
    {
      title: view.status === 404 ? 'Page not found' : 'Something went wrong',
      path: '',
      ...(view.signedIn ? { signedIn: view.signedIn } : {}),
    },
    `<p>${h(view.message)}</p>${reference}<p><a href="/">Back to the console</a></p>`,
  );
}
