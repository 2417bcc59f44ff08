import type { Retrieval, SearchHit } from '../../rag/retrieval.ts';

/** One piece of evidence, as validate answers it. */
export interface EvidenceItem {
  source: 'code' | 'page';
  file?: string;
  startLine?: number;
  endLine?: number;
  selector?: string;
  /** What the evidence is: definition, use, related (retrieval), or the page element. */
  role: 'definition' | 'use' | 'related' | 'element' | 'effect';
  snippet: string;
  /** 0-1: how directly it speaks to the component (a definition 1, a use 0.8, retrieval below). */
  score: number;
}

export interface CodeEvidence {
  definitions: SearchHit[];
  mentions: SearchHit[];
  related: SearchHit[];
  items: EvidenceItem[];
}

const MAX_SNIPPET_LINES = 40;
const MAX_SNIPPET_CHARS = 4000;

export const snippetOf = (content: string): string => {
  const lines = content.split('\n');
  const cut = lines.slice(0, MAX_SNIPPET_LINES).join('\n');
  return (
    (cut.length > MAX_SNIPPET_CHARS ? cut.slice(0, MAX_SNIPPET_CHARS) : cut) +
    (lines.length > MAX_SNIPPET_LINES || cut.length > MAX_SNIPPET_CHARS ? '\n…' : '')
  );
};

/**
 * The component's code in a collection: its definitions and uses by name first (the index's symbols
 * and terms), then what retrieval finds for the behaviour, which may be where the behaviour really
 * lives (a handler, a style, a route).
 */
export async function codeEvidence(
  retrieval: Retrieval,
  collectionId: string,
  component: string,
  behaviour: string,
  limit = 5,
): Promise<CodeEvidence> {
  const { definitions, mentions } = await retrieval.lookup(collectionId, component, limit);
  const { hits } = await retrieval.search(
    collectionId,
    `${component} ${behaviour}`.slice(0, 2000),
    limit + definitions.length + mentions.length,
  );
  const known = new Set([...definitions, ...mentions].map((h) => h.id));
  const related = hits.filter((h) => !known.has(h.id)).slice(0, limit);
  const top = related[0]?.score ?? 0;
  const item = (hit: SearchHit, role: EvidenceItem['role'], score: number): EvidenceItem => ({
    source: 'code',
    file: hit.metadata.file,
    startLine: hit.metadata.startLine,
    endLine: hit.metadata.endLine,
    role,
    snippet: snippetOf(hit.content),
    score: Math.round(score * 1000) / 1000,
  });
  const items = [
    ...definitions.map((h) => item(h, 'definition', 1)),
    ...mentions.map((h) => item(h, 'use', 0.8)),
    // Fused retrieval scores only rank; scaled under a use's, the best related chunk 0.6.
    ...related.map((h) => item(h, 'related', top > 0 ? (0.6 * h.score) / top : 0)),
  ];
  return { definitions, mentions, related, items };
}
