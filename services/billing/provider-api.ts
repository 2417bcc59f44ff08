import { createCheckout, lemonSqueezySetup, listSubscriptions } from '@lemonsqueezy/lemonsqueezy.js';
import { z } from 'zod';

/**
 * The payment provider's API (Lemon Squeezy), through its official SDK: a checkout for a variant,
 * and the store's subscriptions page by page. Answers are checked for the few fields we use; an
 * error says what kind of failure it was and the provider's status, never the provider's body
 * (it can echo a customer's details, and a refused request's body says nothing a caller may see).
 */

export type ProviderFailure = 'unreachable' | 'refused' | 'failing' | 'unreadable';

export class PaymentProviderError extends Error {
  readonly failure: ProviderFailure;
  /** The provider's HTTP status; null when no answer came. */
  readonly status: number | null;
  constructor(failure: ProviderFailure, status: number | null, message: string) {
    super(message);
    this.name = 'PaymentProviderError';
    this.failure = failure;
    this.status = status;
  }
}

export interface CheckoutRequest {
  storeId: string;
  variantId: string;
  /** Our account id: meta.custom_data.user_id of every webhook of the subscription it starts. */
  userId: string;
  email: string;
  name: string;
}

export interface SubscriptionsPage {
  /** The provider's subscription resources (JSON:API objects, as a webhook's `data` holds them). */
  subscriptions: unknown[];
  lastPage: number;
}

export interface PaymentProvider {
  createCheckout(request: CheckoutRequest): Promise<{ url: string }>;
  listSubscriptions(storeId: string, page: number): Promise<SubscriptionsPage>;
}

/** The provider's largest page. */
export const PAGE_SIZE = 100;

const checkoutAnswer = z.object({ data: z.object({ attributes: z.object({ url: z.url() }) }) });
const subscriptionsAnswer = z.object({
  data: z.array(z.object({ type: z.literal('subscriptions'), id: z.union([z.string(), z.number()]) }).loose()),
  meta: z.object({ page: z.object({ lastPage: z.number().int().min(0) }) }),
});

type SdkAnswer = { statusCode: number | null; data: unknown; error: Error | null };

export function lemonSqueezyProvider(options: { apiKey: string; timeoutMs?: number }): PaymentProvider {
  const timeoutMs = options.timeoutMs ?? 15_000;
  // The SDK keeps its key in module state and reads it synchronously when a call starts, so setting
  // it right before each call is safe with several providers in one process (tests).
  const call = async (what: string, start: () => Promise<SdkAnswer>): Promise<unknown> => {
    lemonSqueezySetup({ apiKey: options.apiKey });
    let timer: NodeJS.Timeout | undefined;
    // The SDK takes no AbortSignal: a provider that does not answer is given up on here.
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), timeoutMs);
    });
    const answer = await Promise.race([start(), late]).finally(() => clearTimeout(timer));
    if (answer === 'late') throw new PaymentProviderError('unreachable', null, `${what}: no answer within ${timeoutMs} ms`);
    if (answer.error === null) return answer.data;
    const status = answer.statusCode;
    if (status === null) throw new PaymentProviderError('unreachable', null, `${what}: the provider could not be reached`);
    throw new PaymentProviderError(
      status >= 500 || status === 429 ? 'failing' : 'refused',
      status,
      `${what}: the provider answered ${status}`,
    );
  };

  return {
    async createCheckout(request) {
      const data = await call('create a checkout', () =>
        createCheckout(request.storeId, request.variantId, {
          checkoutData: { email: request.email, name: request.name, custom: { user_id: request.userId } },
          // Only the tier asked for: the product's other variants (another tier) stay off this checkout.
          ...(/^\d+$/.test(request.variantId) ? { productOptions: { enabledVariants: [Number(request.variantId)] } } : {}),
        }),
      );
      const parsed = checkoutAnswer.safeParse(data);
      if (!parsed.success) throw new PaymentProviderError('unreadable', 201, 'create a checkout: the answer has no checkout URL');
      return { url: parsed.data.data.attributes.url };
    },

    async listSubscriptions(storeId, page) {
      const data = await call(`list subscriptions (page ${page})`, () =>
        listSubscriptions({ filter: { storeId }, page: { number: page, size: PAGE_SIZE } }),
      );
      const parsed = subscriptionsAnswer.safeParse(data);
      if (!parsed.success)
        throw new PaymentProviderError('unreadable', 200, `list subscriptions (page ${page}): not a page of subscriptions`);
      return { subscriptions: (data as { data: unknown[] }).data, lastPage: parsed.data.meta.page.lastPage };
    },
  };
}
