import type { MeAnswer } from '../../accounts/accounts.api.ts';
import { csrfField, field, h, page, when, type Frame } from './layout.ts';
import { addressSection } from './verify.page.ts';

/** The account page (pure): GET /auth/me's name, e-mail, tier and creation, the password change form and log out everywhere. */
export function accountPage(view: { me: MeAnswer; csrf: string; notice?: Frame['notice'] }): string {
  const { me } = view;
  return page(
    { title: 'Account', path: '/account', signedIn: { name: me.name, csrf: view.csrf }, ...(view.notice ? { notice: view.notice } : {}) },
    `<section class="card" aria-labelledby="you">
<h2 id="you">You</h2>
<dl class="facts">
<dt>Name</dt><dd>${h(me.name)}</dd>
<dt>E-mail</dt><dd>${h(me.email)}${me.emailVerified ? '' : ' (not verified)'}</dd>
<dt>Tier</dt><dd data-tier>${h(me.tier)}</dd>
<dt>Member since</dt><dd>${when(me.created_at)}</dd>
</dl>
<p><a href="/pricing">Change tier</a> · <a href="/keys">Your API key</a> · <a href="/usage">Usage this month</a> · <a href="/account/sso">Your team's sign-on</a></p>
</section>
${addressSection({ emailVerified: me.emailVerified, csrf: view.csrf })}
<section class="card" aria-labelledby="password">
<h2 id="password">Change password</h2>
<p>Changing it signs every other session of this account out.</p>
<form method="post" action="/account/password" class="stack">
${csrfField(view.csrf)}
${field({ name: 'currentPassword', label: 'Current password', type: 'password', autocomplete: 'current-password', required: true })}
${field({ name: 'newPassword', label: 'New password', type: 'password', autocomplete: 'new-password', required: true, minlength: 8, hint: 'At least 8 characters, not the current one.' })}
<button type="submit">Change password</button>
</form>
</section>
<section class="card" aria-labelledby="sessions">
<h2 id="sessions">Sessions</h2>
<p>Log out everywhere ends every session of this account, in every browser and program, this one too.</p>
<form method="post" action="/account/logout-all">
${csrfField(view.csrf)}
<button type="submit">Log out everywhere</button>
</form>
</section>`,
  );
}
