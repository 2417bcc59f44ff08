import { McpServer } from '@modelcontextprotocol/server';
import { VERSION } from '../platform/version.ts';
import { GLM_TOOLS } from './tools/glm.tools.ts';
import { INFO_TOOLS } from './tools/info.tools.ts';
import { INTEGRATION_TOOLS } from './tools/integration.tools.ts';
import { MEMORY_TOOLS } from './tools/memory.tools.ts';
import { RAG_TOOLS } from './tools/rag.tools.ts';
import type { Tool, ToolContext } from './tools/tool.ts';

/** Every tool the server lists: each one an operation of the HTTP face, over the same code. */
export const MCP_TOOLS: readonly Tool[] = [...RAG_TOOLS, ...MEMORY_TOOLS, ...GLM_TOOLS, ...INTEGRATION_TOOLS, ...INFO_TOOLS];

const INSTRUCTIONS =
  'Code retrieval over your own collections. To search a project: rag_setup (once, over a folder on the server) or push files with rag_index, ' +
  'then rag_query with a question or an identifier. rag_index re-embeds only what changed. ' +
  'Pages: glm_capture takes a screenshot, glm_analyze finds UI, layout, accessibility and visual problems, glm_test runs a suite of checks against baselines. ' +
  'Components: integration_validate checks one against sentences of expected behaviour (code and live page), integration_generate writes its tests, integration_report sums up a project. ' +
  'api_info tells your limits and usage.';

/** One server for one caller's request (the gate let the key through on that very request). */
export function buildMcpServer(ctx: Omit<ToolContext, 'toolNames'>): McpServer {
  const server = new McpServer({ name: 'svc-mcp', title: 'svc vision RAG', version: VERSION }, { instructions: INSTRUCTIONS });
  const context: ToolContext = { ...ctx, toolNames: MCP_TOOLS.map((t) => t.name) };
  for (const tool of MCP_TOOLS) tool.register(server, context);
  return server;
}
