import type { Config } from '../../platform/config.ts';
import type { RagDeps } from '../../rag/app/deps.ts';
import type { VisionDeps } from '../../vision/engine.ts';

/**
 * What the integration operations need: the retrieval engine (code evidence), the browser (page
 * evidence) and, optionally, a language model. The HTTP face and the MCP tools pass the same.
 */
export interface IntegrationDeps {
  rag: RagDeps;
  vision: VisionDeps;
  llm: Config['llm'];
}
