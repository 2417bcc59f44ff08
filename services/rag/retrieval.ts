import type { FileRef } from './events.ts';
import type { PushedSources } from './pushed-sources.ts';

/** One search result, as POST /api/rag/query answers it. */
export interface SearchHit {
  id: string;
  content: string;
  score: number;
  metadata: { file: string; type: string; startLine: number; endLine: number; language: string; symbol?: string };
}

export interface NameLookup {
  definitions: SearchHit[];
  mentions: SearchHit[];
}

/** An index job that cannot go on as asked: the reason is the customer's to read (no server path in it). */
export class IndexBudgetError extends Error {
  /** Over a time or memory budget: the same job would meet it again (it goes to the dead-letter topic). */
  readonly poison: boolean;

  constructor(message: string, poison = false) {
    super(message);
    this.name = 'IndexBudgetError';
    this.poison = poison;
  }
}

/** What one indexing job covers. */
export interface IndexWork {
  collectionId: string;
  /** Whose work it is: index work is shared fairly between tenants (customers). */
  tenant: string;
  /**
   * 'full': the project folder (if any) and every pushed file; the index ends up exactly that, files
   * gone from both leave it. 'pushed': these pushed files only; nothing else is touched.
   */
  mode: 'full' | 'pushed';
  projectPath: string | null;
  pushed: PushedSources;
  /** The pushed files a 'pushed' job names (their content waits in the pushed sources). */
  files?: readonly FileRef[];
}

export interface IndexOutcome {
  filesIndexed: number;
  filesUnchanged: number;
  filesSkipped: number;
  filesRemoved: number;
  /** Chunks in the collection's index after the job. */
  chunks: number;
  /** Every file in the index after the job, with its content hash. */
  manifest: { path: string; hash: string }[];
}

export interface IndexHooks {
  onProgress?: (progress: { filesDone: number; filesTotal: number; chunks: number }) => void;
  /** Stops between files; the job can be run again and carries on (unchanged files are skipped). */
  signal?: AbortSignal;
  /** Called every couple of seconds of long work: the indexer keeps its consumer in the group. */
  heartbeat?: () => Promise<void>;
}

/**
 * The retrieval engine the service and the CLI drive: indexing a collection's sources into its
 * index, and searching it. The embedded implementation keeps one SQLite file per collection.
 */
export interface Retrieval {
  /** How many files of a project folder would be indexed (the quota a path job would use at most). */
  countCandidates(projectPath: string, tenant: string): Promise<number>;
  index(work: IndexWork, hooks?: IndexHooks): Promise<IndexOutcome>;
  /** `tenant`: whose query (its embedding is shared fairly between customers); default the collection. */
  search(collectionId: string, query: string, topK: number, tenant?: string): Promise<{ hits: SearchHit[]; cached: boolean }>;
  /**
   * Where a name is defined (chunks whose own symbol is the name) and mentioned (other chunks whose
   * text holds it as a whole word), from the index's names and full-text terms, best first.
   */
  lookup(collectionId: string, name: string, limit: number): Promise<NameLookup>;
  /** Forgets a collection's index (a rebuild starts from nothing). */
  drop(collectionId: string): Promise<void>;
  close(): Promise<void>;
}
