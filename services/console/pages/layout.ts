import { escapeHtml } from '../../platform/html-escape.ts';

/** The frame of every console page (pure): landmarks, a skip link, the navigation, one h1. */

export const h = escapeHtml;

export interface Frame {
  title: string;
  /** The path of the page, to mark its navigation link as current. */
  path: string;
  /** Signed in: the account's name (the navigation and the log-out form show). */
  signedIn?: { name: string; csrf: string };
  /** A notice above the content: what just happened, or what went wrong. */
  notice?: { kind: 'ok' | 'error'; text: string };
  /** Seconds after which the page reloads itself (an index job in progress); no script needed. */
  refreshSeconds?: number;
  /**
   * Go on to this address at once (a single sign-on's hand-over). A navigation the page starts, unlike
   * a form's redirect, is not held to the CSP's form-action, and it is same-site, so the SameSite=Strict
   * session cookie goes with it.
   */
  goTo?: string;
}

const SIGNED_IN_LINKS = [
  ['/account', 'Account'],
  ['/keys', 'Keys'],
  ['/assistants', 'Assistants'],
  ['/usage', 'Usage'],
  ['/collections', 'Collections'],
  ['/runs', 'Test runs'],
  ['/reports', 'Reports'],
  ['/team', 'Team'],
  ['/audit', 'Audit log'],
  ['/pricing', 'Pricing'],
] as const;

const SIGNED_OUT_LINKS = [
  ['/pricing', 'Pricing'],
  ['/login', 'Log in'],
  ['/signup', 'Sign up'],
] as const;

/** A hidden CSRF field for a form. */
export const csrfField = (token: string): string => `<input type="hidden" name="csrf" value="${h(token)}">`;

export function page(frame: Frame, content: string): string {
  const links = (frame.signedIn ? SIGNED_IN_LINKS : SIGNED_OUT_LINKS)
    .map(([href, text]) => `<li><a href="${href}"${frame.path === href ? ' aria-current="page"' : ''}>${text}</a></li>`)
    .join('');
  const logout = frame.signedIn
    ? `<form class="logout" method="post" action="/logout">${csrfField(frame.signedIn.csrf)}<button type="submit">Log out ${h(frame.signedIn.name)}</button></form>`
    : '';
  const notice = frame.notice
    ? `<p class="notice ${frame.notice.kind}" role="${frame.notice.kind === 'error' ? 'alert' : 'status'}">${h(frame.notice.text)}</p>`
    : '';
  const refresh = frame.goTo
    ? `<meta http-equiv="refresh" content="0; url=${h(frame.goTo)}">`
    : frame.refreshSeconds
      ? `<meta http-equiv="refresh" content="${frame.refreshSeconds}">`
      : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
${refresh}<title>${h(frame.title)} · svc console</title>
<link rel="stylesheet" href="/console.css">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<a class="brand" href="/">svc console</a>
<nav aria-label="Console"><ul>${links}</ul></nav>
${logout}
</header>
<main id="main" tabindex="-1">
<h1>${h(frame.title)}</h1>
${notice}
${content}
</main>
</body>
</html>`;
}

/** A labelled input; `hint` is tied to it with aria-describedby. */
export function field(options: {
  name: string;
  label: string;
  type?: string;
  autocomplete?: string;
  required?: boolean;
  value?: string;
  hint?: string;
  minlength?: number;
  maxlength?: number;
}): string {
  const id = `f-${options.name}`;
  const hint = options.hint ? `<span class="hint" id="${id}-hint">${h(options.hint)}</span>` : '';
  const attrs = [
    `id="${id}"`,
    `name="${options.name}"`,
    `type="${options.type ?? 'text'}"`,
    options.autocomplete ? `autocomplete="${options.autocomplete}"` : '',
    options.required ? 'required' : '',
    options.value !== undefined ? `value="${h(options.value)}"` : '',
    options.hint ? `aria-describedby="${id}-hint"` : '',
    options.minlength !== undefined ? `minlength="${options.minlength}"` : '',
    options.maxlength !== undefined ? `maxlength="${options.maxlength}"` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return `<div class="field"><label for="${id}">${h(options.label)}</label><input ${attrs}>${hint}</div>`;
}

/** A date as customers read it: 26 Nov 2026, 04:16 UTC. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '—';
  return `${d.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' })}, ${d.toISOString().slice(11, 16)} UTC`;
}
