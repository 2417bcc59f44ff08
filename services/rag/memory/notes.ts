import { randomBytes } from 'node:crypto';
import { newEvent } from '../../../events/envelope.ts';
import { publishAndApply } from '../../../events/own-events.ts';
import { actedBy, ragError, type Caller } from '../../premium/caller.ts';
import type { RagDeps } from '../app/deps.ts';
import { queryCollection } from '../app/query-collection.ts';
import { requestIndex, waitForJob } from '../app/request-index.ts';
import { collectionIdOf, collectionsProjection, getCollection } from '../collections.projection.ts';
import type { CollectionConfigured } from '../events.ts';
import { servedVectorDb } from '../vector-db.ts';
import type { NoteAnswer, NoteHitsAnswer, NotesAnswer, StoredNoteAnswer } from './memory-answers.ts';
import type { ListNotesInput, SearchNotesInput, StoreNoteInput } from './memory-input.ts';

/**
 * The team's shared memory: short notes its members and their assistants store, list and search.
 * A note is a pushed file of a collection of the customer's own that no one sets up by hand
 * (MEMORY_COLLECTION; a leading dot, which a customer's collection name cannot have, and left out of
 * every list of collections), so notes are searched by the same retrieval as code: chunked, embedded
 * and ranked by the same engine, metered as queries. Members only: the team tier's keys (the team's
 * members share the team's customer id, so they share its notes; another customer never sees them).
 */
export const MEMORY_COLLECTION = '.memory';
const NOTES = 'notes/';
/** How long storing waits for the note's index job, so a note is searchable when the answer comes. */
const STORE_WAIT_MS = 30_000;

const pathOf = (id: string) => `${NOTES}${id}.md`;
const idOf = (path: string) => path.slice(NOTES.length, -'.md'.length);
const newNoteId = () => `n${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
/**
 * Who stored a note: the member, for a member's own key; the key by its last four, for the team's key
 * (not the key hash the caller carries: that is the quota's, the same for every key of the team).
 */
const authorOf = (caller: Caller): Pick<NoteAnswer, 'author' | 'authorKey'> => {
  const key = caller.keyLast4 ? `…${caller.keyLast4}` : null;
  if (caller.memberUserId) return { author: `account:${caller.memberUserId}`, authorKey: key };
  if (key) return { author: `key:${key}`, authorKey: key };
  return { author: caller.keyHash ? `key:${caller.keyHash.slice(0, 12)}` : 'operator', authorKey: null };
};

function requireTeam(caller: Caller): void {
  // An operator's own call (no key) has no tier; every customer call does.
  if (caller.tier && caller.tier !== 'team') {
    throw ragError(403, 'FORBIDDEN', 'shared memory is part of the team tier');
  }
}

/** The note as stored: a small front matter (who, when, tags), then the text, which is what is searched. */
export function noteFile(note: NoteAnswer): string {
  const key = note.authorKey ? `key: ${note.authorKey}\n` : '';
  return `---\nauthor: ${note.author}\n${key}created: ${note.createdAt}\ntags: ${note.tags.join(', ')}\n---\n${note.text}\n`;
}

export function parseNoteFile(path: string, content: string): NoteAnswer | null {
  // The key line is absent from notes stored before it was written.
  const match = /^---\nauthor: (\S+)\n(?:key: (\S+)\n)?created: (\S+)\ntags: ([^\n]*)\n---\n([\s\S]*)\n$/.exec(content);
  if (!match || !path.startsWith(NOTES)) return null;
  const [, author, authorKey, createdAt, tags, text] = match as unknown as [string, string, string | undefined, string, string, string];
  return { id: idOf(path), author, authorKey: authorKey ?? null, createdAt, tags: tags ? tags.split(', ') : [], text };
}

async function ensureMemoryCollection(deps: RagDeps, caller: Caller, correlationId: string): Promise<void> {
  const collectionId = collectionIdOf(caller.customerId, MEMORY_COLLECTION);
  if (await getCollection(deps.db, collectionId)) return;
  const event: CollectionConfigured = newEvent(
    'rag.collection-configured',
    {
      collectionId,
      customerId: caller.customerId,
      collectionName: MEMORY_COLLECTION,
      projectPath: null,
      vectorDB: servedVectorDb(deps.config.rag.indexEngine),
      ...actedBy(caller),
    },
    { correlationId },
  );
  await publishAndApply(deps.publisher, deps.db, collectionsProjection, [event]);
}

export async function storeNote(deps: RagDeps, caller: Caller, input: StoreNoteInput, correlationId: string): Promise<StoredNoteAnswer> {
  requireTeam(caller);
  await ensureMemoryCollection(deps, caller, correlationId);
  const note: NoteAnswer = {
    id: newNoteId(),
    text: input.text,
    tags: [...new Set(input.tags)],
    createdAt: new Date().toISOString(),
    ...authorOf(caller),
  };
  const accepted = await requestIndex(
    deps,
    caller,
    { collectionName: MEMORY_COLLECTION, files: [{ path: pathOf(note.id), content: noteFile(note) }], wait: false },
    correlationId,
  );
  const job = await waitForJob(deps, accepted.jobId, STORE_WAIT_MS);
  return { success: true, note, searchable: job?.status === 'completed' };
}

export async function listNotes(deps: RagDeps, caller: Caller, input: ListNotesInput): Promise<NotesAnswer> {
  requireTeam(caller);
  const collectionId = collectionIdOf(caller.customerId, MEMORY_COLLECTION);
  const files = await deps.pushed.pageDown(collectionId, NOTES, input.before ? pathOf(input.before) : null, input.limit + 1);
  const page = files.slice(0, input.limit);
  const notes = page.map((f) => parseNoteFile(f.path, f.content)).filter((n): n is NoteAnswer => n !== null);
  // The page's last file, parsed or not, is where the next page starts.
  const last = page.at(-1);
  return { success: true, notes, next: files.length > input.limit && last ? idOf(last.path) : null };
}

export async function searchNotes(deps: RagDeps, caller: Caller, input: SearchNotesInput, correlationId: string): Promise<NoteHitsAnswer> {
  requireTeam(caller);
  const collectionId = collectionIdOf(caller.customerId, MEMORY_COLLECTION);
  const collection = await getCollection(deps.db, collectionId);
  // No note stored yet: nothing to find, and nothing spent.
  if (!collection?.indexedAt) return { success: true, query: input.query, results: [] };
  // Several chunks of one long note come back as one result, its best.
  const found = await queryCollection(
    deps,
    caller,
    { query: input.query, collectionName: MEMORY_COLLECTION, topK: Math.min(50, input.topK * 3) },
    correlationId,
  );
  const results: NoteHitsAnswer['results'] = [];
  const seen = new Set<string>();
  for (const hit of found.results) {
    if (results.length >= input.topK) break;
    const path = hit.metadata.file;
    if (seen.has(path)) continue;
    seen.add(path);
    const source = await deps.pushed.get(collectionId, path);
    const note = source ? parseNoteFile(source.path, source.content) : null;
    if (note) results.push({ note, score: hit.score, excerpt: hit.content.slice(0, 500) });
  }
  return { success: true, query: input.query, results };
}
