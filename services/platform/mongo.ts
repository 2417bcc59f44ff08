import { MongoClient, type Db } from 'mongodb';
import { activeTracer } from '../../events/tracer.ts';
import { traceCommands } from './tracing/mongo-spans.ts';

export interface MongoHandle {
  client: MongoClient;
  db: Db;
}

/**
 * Every wait is bounded below a consumer's 30 s session: selecting a server, connecting, a socket
 * with no answer. An unreachable database then fails an operation in seconds (a transient error the
 * caller retries or answers 503 for), instead of holding a partition until the group rebalances.
 */
export const MONGO_TIMEOUTS = {
  serverSelectionTimeoutMS: 5000,
  connectTimeoutMS: 5000,
  socketTimeoutMS: 20_000,
  waitQueueTimeoutMS: 10_000,
} as const;

export async function connectMongo(uri: string, dbName: string): Promise<MongoHandle> {
  // Command monitoring costs the driver an event object per command: only when traces are on.
  const traced = activeTracer() !== undefined;
  const client = new MongoClient(uri, { ...MONGO_TIMEOUTS, appName: 'svc', monitorCommands: traced });
  if (traced) traceCommands(client);
  await client.connect();
  return { client, db: client.db(dbName) };
}
