import type { Projection } from '../../events/projection.ts';
import { accountsService } from '../accounts/service.ts';
import { usersProjection } from '../accounts/users.projection.ts';
import { billingService } from '../billing/service.ts';
import { subscriptionsProjection } from '../billing/subscriptions.projection.ts';
import { webhooksService } from '../billing/webhooks.service.ts';
import { keysProjection } from '../keys/keys.projection.ts';
import { keysService } from '../keys/service.ts';
import { usageProjection } from '../keys/usage.ts';
import { mailerService } from '../mailer/service.ts';
import type { ServiceModule } from './service.ts';

/** Every service `svc run` knows, in start order. Contexts register here as they land. */
export const SERVICES: readonly ServiceModule[] = [accountsService, keysService, webhooksService, billingService, mailerService];

/** Every projection `svc replay` can rebuild. */
export const PROJECTIONS: readonly Projection[] = [usersProjection, subscriptionsProjection, keysProjection, usageProjection] as unknown as Projection[];
