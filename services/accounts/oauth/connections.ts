import type { Collection, Db } from 'mongodb';
import { open, seal, type SealContext } from '../../platform/sealed-box.ts';

/**
 * The assistants a customer connected (one per OAuth grant): which client, when, when last used,
 * and the subscription its calls count against. The subscription is the customer's API key they
 * chose at consent, kept sealed (AES-256-GCM under KEY_ENCRYPTION_KEY, bound to the grant and the
 * account), so a token's calls go through the key gate exactly as the key's own: same tier,
 * quotas, rate limit and metering. The MCP server receives it sealed and opens it itself.
 */
export interface Connection {
  _id: string;
  accountId: string;
  clientId: string;
  clientName: string;
  scopes: string[];
  resource: string;
  tier: string;
  keyLast4: string;
  sealedKey: string;
  connectedAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export const CONNECTIONS_COLLECTION = 'oauth_connections';

/** How often a connection's "last used" is written: at most once a minute per grant, not once a call. */
const TOUCH_EVERY_MS = 60_000;

export const grantKeyContext = (grantId: string, accountId: string): SealContext => ({
  label: 'svc.oauth-grant-key.v1',
  fields: [grantId, accountId],
});

export const sealGrantKey = (apiKey: string, key32: Buffer, grantId: string, accountId: string): string =>
  seal(apiKey, key32, grantKeyContext(grantId, accountId));

export const openGrantKey = (sealed: string, key32: Buffer, grantId: string, accountId: string): string =>
  open(sealed, key32, grantKeyContext(grantId, accountId), (reason) => new Error(`cannot open the grant's key: ${reason}`));

export class Connections {
  readonly #collection: Collection<Connection>;

  constructor(db: Db) {
    this.#collection = db.collection<Connection>(CONNECTIONS_COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    await this.#collection.createIndex({ accountId: 1, connectedAt: -1 });
  }

  async record(connection: Connection): Promise<void> {
    await this.#collection.replaceOne({ _id: connection._id }, connection, { upsert: true });
  }

  async find(grantId: string): Promise<Connection | null> {
    return this.#collection.findOne({ _id: grantId });
  }

  /** The account's connections that still stand, newest first. */
  async ofAccount(accountId: string): Promise<Connection[]> {
    return this.#collection.find({ accountId, revokedAt: null }).sort({ connectedAt: -1 }).limit(200).toArray();
  }

  /** Marks the connection revoked; true when it stood until now (the first revocation wins). */
  async revoke(grantId: string, accountId?: string): Promise<Connection | null> {
    const filter = accountId === undefined ? { _id: grantId, revokedAt: null } : { _id: grantId, accountId, revokedAt: null };
    const found = await this.#collection.findOne(filter);
    if (!found) return null;
    const { modifiedCount } = await this.#collection.updateOne(filter, { $set: { revokedAt: new Date() } });
    return modifiedCount === 1 ? found : null;
  }

  async touch(connection: Connection, now = new Date()): Promise<void> {
    if (connection.lastUsedAt && now.getTime() - connection.lastUsedAt.getTime() < TOUCH_EVERY_MS) return;
    await this.#collection.updateOne({ _id: connection._id }, { $set: { lastUsedAt: now } });
  }
}
