import type { Tier } from '../../kernel/tiers.ts';

/**
 * What each tier costs a month, in US dollars, as the pricing page shows it. The provider charges
 * what its variant says (PAYMENT_VARIANT_TIERS names the variant); keep the two in step.
 */
export const MONTHLY_PRICE_USD: Readonly<Record<Tier, number>> = Object.freeze({ free: 0, pro: 29, team: 79 });
