/**
 * E-mail domains for single sign-on (pure). An address belongs to a domain when its part after the
 * last `@` is that domain exactly: `ana@eu.acme.com` is not `acme.com`'s (a team names each domain it
 * vouches for), and `ana@acme.com.evil.test` is nobody's but `acme.com.evil.test`'s.
 */

/** The lower-cased domain of an address, or null when it has none. */
export function domainOf(email: string): string | null {
  const at = email.lastIndexOf('@');
  if (at <= 0 || at === email.length - 1) return null;
  return email
    .slice(at + 1)
    .trim()
    .toLowerCase();
}

/** Whether the address is of one of the domains (already lower-cased, as the configuration stores them). */
export function emailInDomains(email: string, domains: readonly string[]): boolean {
  const domain = domainOf(email);
  return domain !== null && domains.includes(domain);
}
