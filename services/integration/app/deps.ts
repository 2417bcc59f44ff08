import type { Config } from '../../platform/config.ts';
import type { WorkPool } from '../../platform/work/work-pool.ts';
import type { RagDeps } from '../../rag/app/deps.ts';
import type { VisionDeps } from '../../vision/engine.ts';

/**
 * What the integration operations need: the retrieval engine (code evidence), the browser (page
 * evidence), optionally a language model, and the worker threads that generate unit and
 * integration tests off the request loop (services/integration/generate/unit/generation-pool.ts).
 * The HTTP face and the MCP tools pass the same.
 */
export interface IntegrationDeps {
  rag: RagDeps;
  vision: VisionDeps;
  llm: Config['llm'];
  generation: Pick<WorkPool, 'run'>;
}
