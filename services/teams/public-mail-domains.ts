/**
 * E-mail domains no team may claim for single sign-on (pure). A free mail provider's domain belongs to
 * its millions of users, not to whoever configures it first: a team claiming it would send their
 * sign-ons through its own provider. Domains that are public suffixes themselves (co.uk, github.io)
 * are refused for the same reason: everyone under them is someone else.
 *
 * Maintained by hand: add a provider when one is reported. A family (hotmail.*) is every domain whose
 * first label is the name, whatever the country suffix, so hotmail.co.uk and yahoo.fr are refused too.
 */

/** Free or consumer mail providers, exactly. */
const PUBLIC_MAIL_DOMAINS: ReadonlySet<string> = new Set([
  '126.com',
  '139.com',
  '163.com',
  '188.com',
  'aim.com',
  'aol.com',
  'att.net',
  'bk.ru',
  'btinternet.com',
  'comcast.net',
  'daum.net',
  'duck.com',
  'email.com',
  'fastmail.com',
  'fastmail.fm',
  'foxmail.com',
  'free.fr',
  'freenet.de',
  'gmail.com',
  'googlemail.com',
  'hanmail.net',
  'hey.com',
  'hushmail.com',
  'icloud.com',
  'inbox.ru',
  'laposte.net',
  'list.ru',
  'mac.com',
  'mail.com',
  'mail.ru',
  'me.com',
  'msn.com',
  'naver.com',
  'orange.fr',
  'passmail.net',
  'pm.me',
  'proton.me',
  'protonmail.ch',
  'protonmail.com',
  'qq.com',
  'rambler.ru',
  'rediffmail.com',
  'rocketmail.com',
  'sbcglobal.net',
  'sina.com',
  'sohu.com',
  't-online.de',
  'tuta.com',
  'tuta.io',
  'tutanota.com',
  'tutanota.de',
  'verizon.net',
  'wanadoo.fr',
  'web.de',
  'yeah.net',
  'ymail.com',
  'zoho.com',
  'zohomail.com',
]);

/** Providers with a domain per country (hotmail.com, hotmail.co.uk, hotmail.fr): refused under any suffix. */
const PUBLIC_MAIL_FAMILIES: ReadonlySet<string> = new Set(['gmx', 'hotmail', 'live', 'outlook', 'windowslive', 'yahoo', 'yandex']);

/**
 * Public suffixes of more than one label (the single-label ones, com or uk, are not host names of two
 * labels and never pass the input's check): country second levels and shared hosting, the common ones.
 */
const PUBLIC_SUFFIXES: ReadonlySet<string> = new Set([
  'ac.uk',
  'co.in',
  'co.jp',
  'co.kr',
  'co.nz',
  'co.uk',
  'co.za',
  'com.ar',
  'com.au',
  'com.br',
  'com.cn',
  'com.mx',
  'com.sg',
  'com.tr',
  'com.tw',
  'gov.uk',
  'ltd.uk',
  'me.uk',
  'net.au',
  'ne.jp',
  'or.jp',
  'org.au',
  'org.uk',
  'plc.uk',
  'appspot.com',
  'azurewebsites.net',
  'blogspot.com',
  'cloudfront.net',
  'github.io',
  'gitlab.io',
  'herokuapp.com',
  'netlify.app',
  'pages.dev',
  'vercel.app',
  'workers.dev',
]);

/** Why a domain cannot be claimed for single sign-on, or null when it may be (the domain normalised: lower case, no trailing dot). */
export function unclaimableDomainReason(domain: string): string | null {
  const name = domain.toLowerCase();
  if (PUBLIC_MAIL_DOMAINS.has(name))
    return `${name} is a public mail domain: its addresses belong to the provider's users, not to one team`;
  const family = name.split('.')[0] ?? '';
  if (PUBLIC_MAIL_FAMILIES.has(family) && isCountryOrGenericSuffix(name.slice(family.length + 1)))
    return `${name} is a public mail domain: its addresses belong to the provider's users, not to one team`;
  if (PUBLIC_SUFFIXES.has(name)) return `${name} is a public suffix: the domains under it belong to different owners`;
  return null;
}

const SECOND_LEVELS: ReadonlySet<string> = new Set(['co', 'com', 'ne', 'net', 'or', 'org']);

/** com, fr, co.uk, com.br: what a mail provider puts after its name (live.acme.de is acme's, not Microsoft's). */
function isCountryOrGenericSuffix(rest: string): boolean {
  const labels = rest.split('.');
  if (labels.length === 1) return true;
  const [second, country] = labels;
  return labels.length === 2 && (PUBLIC_SUFFIXES.has(rest) || (SECOND_LEVELS.has(second ?? '') && /^[a-z]{2}$/.test(country ?? '')));
}
