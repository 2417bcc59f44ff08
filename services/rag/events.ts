import { defineEvent, type EventDefinition } from '../../events/catalog.ts';
import type { Event } from '../../events/envelope.ts';

export const RAG_TOPIC = 'rag.events';

/**
 * Who did it, for the audit log: a team member's own key names the member, and every key its last
 * four (v2; absent or null on older events and an operator's calls). The key hash an event carries
 * is the quota's, which is the team's for all its keys, so it cannot say who.
 */
export interface ActedBy {
  memberUserId?: string | null;
  keyLast4?: string | null;
}

export interface CollectionConfiguredData extends ActedBy {
  /** Customer-scoped (collectionIdOf): two customers' collections of one name never meet. */
  collectionId: string;
  customerId: string;
  collectionName: string;
  /** Absolute, resolved inside RAG_ROOTS; null for a collection fed only by pushed files. */
  projectPath: string | null;
  vectorDB: string;
}

export interface FileRef {
  path: string;
  /** sha256 of the content, hex. */
  hash: string;
  size: number;
}

export interface IndexRequestedData extends ActedBy {
  jobId: string;
  collectionId: string;
  customerId: string;
  collectionName: string;
  source: 'path' | 'files';
  /** The pushed files (their content waits in rag_sources); empty for a path source. */
  files: FileRef[];
  /** The key whose filesIndexed quota the work uses; null when an operator asked. */
  keyHash: string | null;
}

export interface IndexStartedData {
  jobId: string;
  collectionId: string;
  attempt: number;
}

export interface IndexCompletedData {
  jobId: string;
  collectionId: string;
  customerId: string;
  filesIndexed: number;
  filesUnchanged: number;
  filesSkipped: number;
  filesRemoved: number;
  /** Chunks in the collection's index after the job. */
  chunks: number;
  durationMs: number;
  /** Every file in the index with its content hash: what the index was built from. */
  manifest: { path: string; hash: string }[];
}

export interface IndexFailedData {
  jobId: string;
  collectionId: string;
  customerId: string;
  error: string;
  durationMs: number;
}

export interface QueryServedData {
  queryId: string;
  collectionId: string;
  customerId: string;
  collectionName: string;
  /** The key whose queries quota the query used; null when an operator asked. */
  keyHash: string | null;
  results: number;
  cached: boolean;
  /** From the request's arrival at the operation to its answer in hand (search only, no HTTP). */
  durationMs: number;
}

export interface CollectionDeletedData extends ActedBy {
  collectionId: string;
  customerId: string;
  collectionName: string;
}

export type CollectionConfigured = Event<'rag.collection-configured', CollectionConfiguredData>;
export type CollectionDeleted = Event<'rag.collection-deleted', CollectionDeletedData>;
export type IndexRequested = Event<'rag.index-requested', IndexRequestedData>;
export type IndexStarted = Event<'rag.index-started', IndexStartedData>;
export type IndexCompleted = Event<'rag.index-completed', IndexCompletedData>;
export type IndexFailed = Event<'rag.index-failed', IndexFailedData>;
export type QueryServed = Event<'rag.query-served', QueryServedData>;

/** Every event the retrieval context publishes. */
export type RagEvent =
  | CollectionConfigured
  | CollectionDeleted
  | IndexRequested
  | IndexStarted
  | IndexCompleted
  | IndexFailed
  | QueryServed;

export const RAG_EVENT_TYPES = [
  'rag.collection-configured',
  'rag.collection-deleted',
  'rag.index-requested',
  'rag.index-started',
  'rag.index-completed',
  'rag.index-failed',
  'rag.query-served',
] as const satisfies readonly RagEvent['type'][];

/** One collection's events stay ordered in one partition. */
export const RAG_EVENTS: readonly EventDefinition[] = RAG_EVENT_TYPES.map((type) =>
  defineEvent<RagEvent>({ type, topic: RAG_TOPIC, schema: `rag/${type}`, key: (d) => d.collectionId }),
);
