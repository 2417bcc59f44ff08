import type { SsoLinkAnswer } from '../../accounts/sso/sso-input.ts';
import { csrfField, h, page, when, type Frame } from './layout.ts';

/**
 * The account's single sign-on page, /account/sso (pure): the team providers linked to the account,
 * a form to link the team's provider (by the account's own address) and one to remove each link its
 * owner made. What linking does is said before the button: it lets that team's provider sign you in.
 */
export function ssoLinkPage(view: {
  signedIn: NonNullable<Frame['signedIn']>;
  email: string;
  links: readonly SsoLinkAnswer[];
  notice?: Frame['notice'];
}): string {
  const rows = view.links
    .map(
      (l) =>
        `<tr><td>${h(l.issuer)}</td><td>${when(l.linkedAt)}</td><td>${
          l.via === 'link'
            ? `<form method="post" action="/account/sso/unlink">${csrfField(view.signedIn.csrf)}<input type="hidden" name="id" value="${h(l.id)}"><button type="submit" class="secondary">Unlink</button></form>`
            : 'Made your account (cannot be removed)'
        }</td></tr>`,
    )
    .join('\n');
  const linked = view.links.length
    ? `<table><caption>Linked sign-ons</caption><thead><tr><th scope="col">Provider</th><th scope="col">Linked</th><th scope="col">Action</th></tr></thead><tbody>
${rows}
</tbody></table>`
    : '<p>No team sign-on is linked to this account: only your password opens it.</p>';
  return page(
    { title: 'Single sign-on', path: '/account/sso', signedIn: view.signedIn, ...(view.notice ? { notice: view.notice } : {}) },
    `<section class="card" aria-labelledby="linked">
<h2 id="linked">Linked sign-ons</h2>
${linked}
</section>
<section class="card" aria-labelledby="link">
<h2 id="link">Link your team's sign-on</h2>
<p>Once linked, your team's sign-in provider opens this account (${h(view.email)}) as well as your password does. Link it only if you trust your team's provider: whoever runs it can sign in as the identity you link. It must say your address is ${h(view.email)}, and you must be in the team.</p>
<form method="post" action="/account/sso/link" class="stack">
${csrfField(view.signedIn.csrf)}
<button type="submit">Link your team's sign-on</button>
</form>
</section>`,
  );
}
