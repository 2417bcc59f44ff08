import { z } from 'zod';
import { unclaimableDomainReason } from './public-mail-domains.ts';
import { DOMAIN_PROOF_TOKEN } from './sso-domain-proof-token.ts';

/**
 * What a team owner may configure for single sign-on (pure): the OpenID Connect issuer, the client
 * registered there for svc, and the e-mail domains whose addresses sign in through it.
 */

export const MAX_SSO_DOMAINS = 10;

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** A DNS host name of two labels or more (acme.test, eu.acme.com); no IP address, no port, no trailing dot. */
export function isHostname(name: string): boolean {
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return false;
  // An all-digit last label would make 10.0.0.1 a "domain".
  return !/^\d+$/.test(labels.at(-1)!);
}

/**
 * An issuer URL: https, or plain http only when the deployment allows it (SSO_ALLOW_HTTP_ISSUERS, for a
 * provider on this machine in development and tests). No credentials, query or fragment: the issuer is
 * an identifier the ID token's `iss` must equal, and discovery appends to its path.
 */
export function issuerProblem(raw: string, allowHttp: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'issuer must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:'))
    return allowHttp ? 'issuer must be an http or https URL' : 'issuer must be an https URL';
  if (url.username || url.password) return 'issuer must not carry credentials';
  if (url.search || url.hash) return 'issuer must not have a query or a fragment';
  return null;
}

export const ssoConfigInput = (allowHttp: boolean) =>
  z.object({
    subscriptionId: z.string({ error: 'subscriptionId is required' }).min(1, { error: 'subscriptionId is required' }).max(200),
    issuer: z
      .string({ error: 'issuer is required' })
      .trim()
      .max(500, { error: 'issuer is too long' })
      .superRefine((s, ctx) => {
        const problem = issuerProblem(s, allowHttp);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }),
    clientId: z
      .string({ error: 'clientId is required' })
      .trim()
      .min(1, { error: 'clientId is required' })
      .max(500, { error: 'clientId is too long' }),
    clientSecret: z
      .string({ error: 'clientSecret is required' })
      .min(1, { error: 'clientSecret is required' })
      .max(1000, { error: 'clientSecret is too long' }),
    domains: z
      .array(z.string({ error: 'each domain must be a string' }).trim().toLowerCase(), {
        error: 'domains must be a list of e-mail domains',
      })
      .min(1, { error: 'domains must name at least one e-mail domain' })
      .max(MAX_SSO_DOMAINS, { error: `domains may name at most ${MAX_SSO_DOMAINS} e-mail domains` })
      .superRefine((domains, ctx) => {
        const bad = domains.find((d) => !isHostname(d));
        if (bad !== undefined) {
          ctx.addIssue({ code: 'custom', message: `"${bad.slice(0, 100)}" is not an e-mail domain (a host name such as acme.com)` });
          return;
        }
        for (const domain of domains) {
          const reason = unclaimableDomainReason(domain);
          if (reason) return void ctx.addIssue({ code: 'custom', message: `${reason}; it cannot be claimed for single sign-on` });
        }
      })
      .transform((domains) => [...new Set(domains)]),
  });

export const ssoRemoveInput = z.object({
  subscriptionId: z.string({ error: 'subscriptionId is required' }).min(1, { error: 'subscriptionId is required' }).max(200),
});

export type SsoConfigInput = z.output<ReturnType<typeof ssoConfigInput>>;

const domain = z
  .string({ error: 'domain is required' })
  .trim()
  .toLowerCase()
  .max(253, { error: 'domain is too long' })
  .refine(isHostname, { error: 'domain is not an e-mail domain (a host name such as acme.com)' });

/**
 * Asking for a domain's proof e-mail: the domain (one the configuration names) and the address at that
 * domain to mail the one-time link to; without one, the owner's own address, when it is at the domain.
 */
export const domainProofInput = z.object({
  subscriptionId: z.string({ error: 'subscriptionId is required' }).min(1, { error: 'subscriptionId is required' }).max(200),
  domain,
  address: z
    .string({ error: 'address must be a string' })
    .trim()
    .toLowerCase()
    .max(320, { error: 'address is too long' })
    .pipe(z.email({ error: 'address is not a valid e-mail address' }))
    .optional(),
});

export const domainProofConfirmInput = z.object({
  token: z.string({ error: 'token is required' }).regex(DOMAIN_PROOF_TOKEN, { error: 'token is not a domain proof token' }),
});

/** Whether an address is at exactly this domain (not a subdomain, not a look-alike): the domain part after the last @. */
export const isAddressAt = (address: string, domainName: string): boolean =>
  address.slice(address.lastIndexOf('@') + 1).toLowerCase() === domainName.toLowerCase();
