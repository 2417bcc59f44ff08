import type { Collection, Db } from 'mongodb';
import type { Adapter, AdapterPayload } from 'oidc-provider';

/**
 * oidc-provider's storage over the accounts database, so every replica of the accounts service
 * shares clients, interactions, sessions, grants and tokens (nothing of a grant lives in one
 * process). One collection per model; the payload is kept as JSON text (its keys are the
 * provider's, some not valid field names), with the few fields looked up beside it. FerretDB has
 * no TTL index: an expired document is never answered and `sweep()` deletes them.
 */
export interface StoredModel {
  _id: string;
  payload: string;
  expiresAt: Date | null;
  grantId?: string;
  uid?: string;
  userCode?: string;
}

export const OAUTH_COLLECTION_PREFIX = 'oauth_';
const MODELS = [
  'Session',
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'ClientCredentials',
  'Client',
  'Interaction',
  'Grant',
  'ReplayDetection',
  'PushedAuthorizationRequest',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'RegistrationAccessToken',
] as const;

/**
 * How long a dynamically registered client that nobody has used yet is kept: registration is open
 * to anyone (RFC 7591), so registrations no person ever consented to must not pile up.
 */
export const UNUSED_CLIENT_TTL_SECONDS = 24 * 3600;

export const oauthCollection = (db: Db, model: string): Collection<StoredModel> =>
  db.collection<StoredModel>(`${OAUTH_COLLECTION_PREFIX}${model.toLowerCase()}`);

/**
 * Whether a value can be stored here at all: the database's text holds no NUL and no lone UTF-16
 * surrogate, and refuses a query that names one (a 500 where "not found" is the truth). Every id the
 * provider stores is its own URL-safe text, so a lookup by anything else finds nothing.
 */
const storable = (value: string): boolean => !value.includes('\u0000') && value.isWellFormed();

const live = (doc: StoredModel | null, now = Date.now()): AdapterPayload | undefined =>
  doc && (doc.expiresAt === null || doc.expiresAt.getTime() > now) ? (JSON.parse(doc.payload) as AdapterPayload) : undefined;

/** The adapter class oidc-provider instantiates per model (`new Adapter(name)`), over `db`. */
export function mongoAdapter(db: Db): new (model: string) => Adapter {
  return class MongoAdapter implements Adapter {
    readonly #model: string;
    readonly #collection: Collection<StoredModel>;

    constructor(model: string) {
      this.#model = model;
      this.#collection = oauthCollection(db, model);
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      // A registration (no expiry of its own) expires unless a grant marks it used (ClientUse).
      const ttl = expiresIn ?? (this.#model === 'Client' && payload.svc_used !== true ? UNUSED_CLIENT_TTL_SECONDS : undefined);
      const doc: StoredModel = {
        _id: id,
        payload: JSON.stringify(payload),
        expiresAt: ttl ? new Date(Date.now() + ttl * 1000) : null,
        ...(typeof payload.grantId === 'string' ? { grantId: payload.grantId } : {}),
        ...(typeof payload.uid === 'string' ? { uid: payload.uid } : {}),
        ...(typeof payload.userCode === 'string' ? { userCode: payload.userCode } : {}),
      };
      await this.#collection.replaceOne({ _id: id }, doc, { upsert: true });
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (!storable(id)) return undefined;
      const payload = live(await this.#collection.findOne({ _id: id }));
      // Our own mark, not client metadata the provider knows.
      if (payload) delete payload.svc_used;
      return payload;
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      if (!storable(uid)) return undefined;
      return live(await this.#collection.findOne({ uid }));
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      if (!storable(userCode)) return undefined;
      return live(await this.#collection.findOne({ userCode }));
    }

    async consume(id: string): Promise<void> {
      if (!storable(id)) return;
      const doc = await this.#collection.findOne({ _id: id });
      if (!doc) return;
      const payload = JSON.parse(doc.payload) as AdapterPayload;
      payload.consumed = Math.floor(Date.now() / 1000);
      await this.#collection.updateOne({ _id: id }, { $set: { payload: JSON.stringify(payload) } });
    }

    async destroy(id: string): Promise<void> {
      if (!storable(id)) return;
      await this.#collection.deleteOne({ _id: id });
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      if (!storable(grantId)) return;
      await this.#collection.deleteMany({ grantId });
    }
  };
}

/** Marks a registered client as used (a person consented to it): it no longer expires unused. */
export async function markClientUsed(db: Db, clientId: string): Promise<void> {
  const collection = oauthCollection(db, 'Client');
  const doc = await collection.findOne({ _id: clientId });
  if (!doc) return;
  const payload = { ...(JSON.parse(doc.payload) as AdapterPayload), svc_used: true };
  await collection.updateOne({ _id: clientId }, { $set: { payload: JSON.stringify(payload), expiresAt: null } });
}

export async function ensureOauthIndexes(db: Db): Promise<void> {
  for (const model of MODELS) {
    const collection = oauthCollection(db, model);
    await collection.createIndex({ expiresAt: 1 });
    if (['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest'].includes(model))
      await collection.createIndex({ grantId: 1 });
    if (model === 'Session') await collection.createIndex({ uid: 1 });
  }
}

/** Deletes what has expired (FerretDB keeps it otherwise); returns how many documents. */
export async function sweepOauth(db: Db, now = new Date()): Promise<number> {
  let deleted = 0;
  for (const model of MODELS) deleted += (await oauthCollection(db, model).deleteMany({ expiresAt: { $lt: now } })).deletedCount;
  return deleted;
}
