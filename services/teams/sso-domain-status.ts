import { z } from 'zod';
import type { SsoSettings } from './workspaces.projection.ts';

/** Each configured domain's standing, as the owner and admins read it: never a token nor its hash. */
export const ssoDomainStatus = z.object({
  domain: z.string(),
  status: z.enum(['pending', 'proven']).describe('proven: its proof e-mail was confirmed; only proven domains sign on'),
  proofSentTo: z.string().nullable().describe('the address the live proof link went to, while one is pending and unexpired'),
  proofExpiresAt: z.string().nullable().describe('ISO 8601: when that link stops working'),
});
export type SsoDomainStatus = z.output<typeof ssoDomainStatus>;

/** Pure: the configured domains in their order, each proven or pending, with its live link's address and expiry. */
export function ssoDomainStatuses(
  sso: Pick<SsoSettings, 'domains' | 'provenDomains' | 'proofs'>,
  now: number = Date.now(),
): SsoDomainStatus[] {
  const proven = sso.provenDomains ?? [];
  const proofs = sso.proofs ?? [];
  return sso.domains.map((domain) => {
    if (proven.includes(domain)) return { domain, status: 'proven', proofSentTo: null, proofExpiresAt: null };
    const live = proofs.findLast((p) => p.domain === domain && p.status === 'pending' && new Date(p.expiresAt).getTime() >= now);
    return {
      domain,
      status: 'pending',
      proofSentTo: live?.address ?? null,
      proofExpiresAt: live ? new Date(live.expiresAt).toISOString() : null,
    };
  });
}
