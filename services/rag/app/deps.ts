import type { Db } from 'mongodb';
import type { EventPublisher } from '../../../events/publisher.ts';
import type { Config } from '../../platform/config.ts';
import type { PushedSources } from '../pushed-sources.ts';
import type { Retrieval } from '../retrieval.ts';

/** What the retrieval operations need; the HTTP face, the MCP tools and the CLI all pass the same. */
export interface RagDeps {
  db: Db;
  publisher: Pick<EventPublisher, 'publishOrdered'>;
  /** Where metered uses are recorded (usage.incremented). */
  usagePublisher: Pick<EventPublisher, 'publish'>;
  config: Pick<Config, 'rag' | 'urls'>;
  retrieval: Retrieval;
  pushed: PushedSources;
}
