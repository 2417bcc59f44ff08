import type { Express, Request } from 'express';
import { z } from 'zod';
import type { Tier } from '../kernel/tiers.ts';
import { HttpError, badRequest } from '../platform/http/errors.ts';
import { noStore } from '../platform/http/no-store.ts';
import { PaymentProviderError, type PaymentProvider } from './provider-api.ts';

export const CHECKOUT_PATH = '/billing/checkout';

export const checkoutInput = z.object({ tier: z.enum(['pro', 'team']).describe('The paid tier to subscribe to.') }).strict();
export const checkoutAnswer = z.object({
  url: z.string().describe("The provider's checkout page for this account and tier: send the customer there."),
});
export type CheckoutAnswer = z.output<typeof checkoutAnswer>;

/** The signed-in account a request carries (accounts' session check: a 401 otherwise). */
export type SignedIn = (req: Request) => Promise<{ userId: string; email: string; name: string }>;

export interface CheckoutDeps {
  /** null: PAYMENT_API_KEY is unset. */
  provider: PaymentProvider | null;
  storeId: string | null;
  variantTiers: ReadonlyMap<string, Tier>;
  signedIn: SignedIn;
}

/** What checkout lacks in this deployment, or null when it can sell `tier` (the pricing page says the same). */
export function checkoutGap(deps: Pick<CheckoutDeps, 'provider' | 'storeId' | 'variantTiers'>, tier?: Tier): string | null {
  if (deps.provider === null) return 'checkout is not configured here (PAYMENT_API_KEY is unset)';
  if (deps.storeId === null) return 'checkout is not configured here (PAYMENT_STORE_ID is unset)';
  if (tier !== undefined && variantOf(deps.variantTiers, tier) === null)
    return `no variant sells the ${tier} tier here (PAYMENT_VARIANT_TIERS)`;
  return null;
}

/** The variant that sells a tier: the first PAYMENT_VARIANT_TIERS lists for it. */
export function variantOf(variantTiers: ReadonlyMap<string, Tier>, tier: Tier): string | null {
  for (const [variant, t] of variantTiers) if (t === tier) return variant;
  return null;
}

/**
 * POST /billing/checkout {tier}: the provider's checkout for the signed-in account, with the
 * account id in its custom data, which every webhook of the subscription then carries and the
 * billing decider links the subscription by. Nothing is recorded here: the subscription exists
 * when the provider's webhook says so.
 */
export function mountCheckoutRoute(app: Express, deps: CheckoutDeps): void {
  app.post(CHECKOUT_PATH, noStore, async (req, res) => {
    const who = await deps.signedIn(req);
    const parsed = checkoutInput.safeParse(req.body);
    if (!parsed.success) throw badRequest('body must be {"tier": "pro" | "team"}');
    const { tier } = parsed.data;
    const gap = checkoutGap(deps, tier);
    if (gap !== null || deps.provider === null || deps.storeId === null)
      throw new HttpError(503, 'CHECKOUT_NOT_CONFIGURED', gap ?? 'checkout is not configured here');
    const variantId = variantOf(deps.variantTiers, tier)!;
    try {
      const { url } = await deps.provider.createCheckout({
        storeId: deps.storeId,
        variantId,
        userId: who.userId,
        email: who.email,
        name: who.name,
      });
      req.log.info({ userId: who.userId, tier, variantId }, 'checkout created');
      res.status(201).json({ url } satisfies CheckoutAnswer);
    } catch (err) {
      if (!(err instanceof PaymentProviderError)) throw err;
      // The status and kind only: the provider's body stays out of logs and answers.
      req.log.warn({ failure: err.failure, providerStatus: err.status, tier, variantId }, 'checkout not created');
      throw providerAnswer(err);
    }
  });
}

function providerAnswer(err: PaymentProviderError): HttpError {
  switch (err.failure) {
    case 'unreachable':
    case 'failing':
      return new HttpError(503, 'PROVIDER_UNAVAILABLE', 'the payment provider is unavailable; retry shortly', {
        headers: { 'Retry-After': '30' },
      });
    case 'refused':
      return new HttpError(502, 'PROVIDER_REFUSED', 'the payment provider refused to create the checkout (the service log has its status)');
    case 'unreadable':
      return new HttpError(502, 'PROVIDER_UNREADABLE', 'the payment provider answered without a checkout URL');
    default: {
      const unhandled: never = err.failure;
      throw new Error(`unhandled failure ${String(unhandled)}`);
    }
  }
}
