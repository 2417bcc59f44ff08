import { splitSegments } from './index-store/name-index.ts';
import type { CollectionIndex } from './index-store/collection-index.ts';
import type { NameLookup, SearchHit } from './retrieval.ts';

/** How many full-text candidates a lookup reads: a name used more often than this shows its best uses. */
const CANDIDATES = 200;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A name's definitions and mentions in one collection's index. The name index only holds names of
 * two words or more (one-word names are English as often as code), so full-text candidates are read
 * too, and each candidate is judged by its own symbol and text: a definition is a chunk whose last
 * symbol segment is the name (exact case first; another case only when none is exact).
 */
export async function lookupName(store: CollectionIndex, name: string, limit: number): Promise<NameLookup> {
  const trimmed = name.trim();
  if (trimmed === '') return { definitions: [], mentions: [] };
  const ranked = [...(await store.searchNamed(trimmed, 20)), ...(await store.searchBm25(trimmed, CANDIDATES))];
  const seen = new Set<number>();
  const candidates = await store.hits(ranked.filter((r) => !seen.has(r.rowId) && (seen.add(r.rowId), true)));
  const lastSegment = (hit: SearchHit) => {
    const segments = hit.metadata.symbol ? splitSegments(hit.metadata.symbol) : [];
    return segments.at(-1)?.trim();
  };
  let definitions = candidates.filter((h) => lastSegment(h) === trimmed);
  if (definitions.length === 0) definitions = candidates.filter((h) => lastSegment(h)?.toLowerCase() === trimmed.toLowerCase());
  const defined = new Set(definitions.map((h) => h.id));
  const word = new RegExp(`(^|[^\\p{L}\\p{N}_$])${escapeRegExp(trimmed)}($|[^\\p{L}\\p{N}_$])`, 'u');
  const mentions = candidates.filter((h) => !defined.has(h.id) && word.test(h.content));
  return { definitions: definitions.slice(0, limit), mentions: mentions.slice(0, limit) };
}
