import type { Projection } from '../../events/projection.ts';
import { accountsService } from '../accounts/service.ts';
import { usersProjection } from '../accounts/users.projection.ts';
import { mailerService } from '../mailer/service.ts';
import type { ServiceModule } from './service.ts';

/** Every service `svc run` knows, in start order. Contexts register here as they land. */
export const SERVICES: readonly ServiceModule[] = [accountsService, mailerService];

/** Every projection `svc replay` can rebuild. */
export const PROJECTIONS: readonly Projection[] = [usersProjection as unknown as Projection];
