import type { Db } from 'mongodb';
import { projectionCollection } from '../../events/collections.ts';
import { findProjected, type Projection } from '../../events/projection.ts';
import type { Tier } from '../platform/config.ts';
import type { AccountRegisteredData } from './events.ts';

/** The users read model: what /auth/me and login answer with. */
export interface User {
  id: string;
  email: string;
  name: string;
  tier: Tier;
  createdAt: Date;
}

export const usersProjection: Projection<User & Record<string, unknown>> = {
  name: 'users',
  collection: 'users',
  handles: ['account.registered'],
  documentId: (event) => (event.data as AccountRegisteredData).userId,
  evolve(user, event) {
    switch (event.type) {
      case 'account.registered': {
        const d = event.data as AccountRegisteredData;
        // A second registration of the same id cannot happen; keep the first if the log says otherwise.
        return user ?? { id: d.userId, email: d.email, name: d.name, tier: 'free', createdAt: event.metadata.occurredAt };
      }
      default:
        return user;
    }
  },
  indexes: [{ key: { email: 1 } }],
};

export async function getUser(db: Db, id: string): Promise<User | null> {
  return findProjected<User>(await projectionCollection(db, usersProjection.collection), id);
}
