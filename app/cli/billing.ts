import type { Writable } from 'node:stream';
import { lemonSqueezyProvider, PaymentProviderError } from '../../services/billing/provider-api.ts';
import { reconcile, ReconciliationBusy } from '../../services/billing/reconciler.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { createAppRuntime } from '../runtime.ts';
import { EXIT, UsageError } from './exit.ts';

export const BILLING_USAGE = `svc billing reconcile      ask the provider for the store's subscriptions and record what the webhooks missed`;

export interface BillingCommandIo {
  env?: NodeJS.ProcessEnv;
  out?: Writable;
  err?: Writable;
}

/**
 * `svc billing reconcile`: the nightly pass, now. A line per page on stderr, the counts on stdout.
 * Exit 0: every subscription in step or recorded; 1: some could not be used (named, e.g. a variant
 * missing from PAYMENT_VARIANT_TIERS); 69: the provider or the stack is unreachable, or another pass
 * holds the lease; 78: PAYMENT_API_KEY or PAYMENT_STORE_ID unset.
 */
export async function billingCommand(args: readonly string[], io: BillingCommandIo = {}): Promise<number> {
  const [action, ...extra] = args;
  if (action !== 'reconcile' || extra.length > 0) throw new UsageError(`usage: ${BILLING_USAGE}`);
  const out = io.out ?? process.stdout;
  const err = io.err ?? process.stderr;
  const config = loadConfig(io.env ?? process.env);
  const { apiKey, storeId, allowTestMode } = config.payments;
  if (apiKey === null || storeId === null) {
    err.write('svc: reconciliation needs PAYMENT_API_KEY and PAYMENT_STORE_ID\n');
    return EXIT.config;
  }
  const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const runtime = await createAppRuntime(config, log);
  try {
    const report = await reconcile(
      {
        db: runtime.mongo.db,
        publisher: runtime.publisher,
        provider: lemonSqueezyProvider({ apiKey }),
        storeId,
        variantTiers: config.variantTiers,
        scope: { storeId, allowTestMode },
        leaseMs: config.effectLeaseMs,
        log,
      },
      (p) => err.write(`page ${p.page}/${p.lastPage}: ${p.listed} subscriptions compared, ${p.published} recorded\n`),
    );
    out.write(
      `reconciled store ${storeId}: ${report.listed} subscriptions listed, ${report.published} recorded (missed by the webhooks), ` +
        `${report.inStep} in step, ${report.skipped} skipped, ${report.unusable.length} unusable\n`,
    );
    for (const u of report.unusable) out.write(`  unusable ${u.subscriptionId}: ${u.error}\n`);
    return report.unusable.length > 0 ? EXIT.failure : EXIT.ok;
  } catch (e) {
    if (
      e instanceof ReconciliationBusy ||
      (e instanceof PaymentProviderError && (e.failure === 'unreachable' || e.failure === 'failing'))
    ) {
      err.write(`svc: ${e.message}\n`);
      return EXIT.unavailable;
    }
    if (e instanceof PaymentProviderError && e.failure === 'refused') {
      err.write(`svc: ${e.message} (is PAYMENT_API_KEY right, and PAYMENT_STORE_ID its store?)\n`);
      return EXIT.config;
    }
    throw e;
  } finally {
    await runtime.close();
  }
}
