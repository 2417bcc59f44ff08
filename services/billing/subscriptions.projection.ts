import type { Db } from 'mongodb';
import { projectionCollection } from '../../events/collections.ts';
import { findProjected, type Projection, type StoredDocument } from '../../events/projection.ts';
import { SUBSCRIPTION_EVENT_TYPES, type SubscriptionEvent } from './events.ts';
import { evolve, initialState, type SubscriptionState } from './subscription.ts';

type SubscriptionDocument = SubscriptionState & Record<string, unknown>;

/** The subscriptions read model is the decider's own state, folded from subscriptions.events. */
export const subscriptionsProjection: Projection<SubscriptionDocument, SubscriptionEvent> = {
  name: 'subscriptions',
  collection: 'subscriptions',
  handles: SUBSCRIPTION_EVENT_TYPES,
  documentId: (event) => event.data.subscriptionId,
  evolve: (state, event) => ({ ...evolve(state ?? initialState(), event) }),
  indexes: [{ key: { status: 1, endsAt: 1 } }, { key: { userId: 1 } }],
};

export async function getSubscription(db: Db, subscriptionId: string): Promise<SubscriptionState | null> {
  return findProjected<SubscriptionState>(await projectionCollection(db, subscriptionsProjection.collection), subscriptionId);
}

/** Cancelled subscriptions whose paid period is over: the deadline scheduler ends them. */
export async function dueForEnd(db: Db, now: Date): Promise<SubscriptionState[]> {
  const collection = await projectionCollection<StoredDocument<SubscriptionState>>(db, subscriptionsProjection.collection);
  const docs = await collection.find({ status: 'cancelled', endsAt: { $lte: now }, _deleted: { $ne: true } }).toArray();
  return docs.map(({ _id, _v, _pos, _deleted, ...state }) => state as SubscriptionState);
}
