import { z } from 'zod';
import { indexStatus } from '../../rag/app/index-status.ts';
import { queryCollection } from '../../rag/app/query-collection.ts';
import { requestIndex, waitForJob } from '../../rag/app/request-index.ts';
import { setupCollection } from '../../rag/app/setup-collection.ts';
import { jobAnswer, queryAnswer, setupAnswer } from '../../rag/answers.ts';
import { indexInput, jobIdInput, queryInput, setupInput } from '../../rag/input.ts';
import { defineTool, type Tool } from './tool.ts';

/**
 * How long rag_index waits for its job by default. An assistant wants the counts in the answer, but
 * a client's request timeout (often 60 s) must not cut the call; past this, the job goes on and
 * rag_index_status follows it.
 */
export const INDEX_WAIT_MS = 45_000;

const jobOutput = jobAnswer;

/** An index job's states as progress steps (queued 0, running 1, ended 2 of 2). */
const JOB_STEPS = 2;
const JOB_STEP = { queued: 0, running: 1, completed: 2, failed: 2 } as const;

const renderJob = (job: z.output<typeof jobOutput>): string => {
  const counts = `${job.filesIndexed} indexed, ${job.filesUnchanged} unchanged, ${job.filesSkipped} skipped, ${job.filesRemoved} removed, ${job.chunks} chunks`;
  if (job.status === 'completed')
    return `index job ${job.jobId} on ${job.collectionName} completed in ${job.durationMs ?? 0} ms: ${counts}`;
  if (job.status === 'failed') return `index job ${job.jobId} on ${job.collectionName} failed: ${job.error ?? 'unknown error'}`;
  return `index job ${job.jobId} on ${job.collectionName} is ${job.status} (${counts} so far); follow it with rag_index_status`;
};

export const ragSetupTool = defineTool({
  name: 'rag_setup',
  title: 'Set up a code collection',
  description:
    'Creates (or re-points) one of your collections over a project folder on the server, or, with projectPath left out, over the files you push, so it can be indexed and searched. ' +
    "Call once per project, then rag_index, then rag_query. A folder must be inside the server's RAG_ROOTS; api_info tells your limits.",
  input: setupInput,
  output: setupAnswer,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: (args, ctx) => setupCollection(ctx.engine.deps, ctx.caller, args, ctx.correlationId),
  render: (r) => `${r.message} (${r.projectPath === null ? 'pushed files' : `project ${r.projectPath}`}, vector store ${r.vectorDB})`,
});

export const ragIndexTool = defineTool({
  name: 'rag_index',
  title: 'Index code into a collection',
  description:
    "Indexes code into a collection: either the files you push (files: [{path, content}], relative paths) or, with files left out, the collection's project folder on the server. " +
    'Only new or changed files are re-embedded; each file indexed counts toward your filesIndexed quota. ' +
    `By default waits up to ${INDEX_WAIT_MS / 1000} s for the job and returns its counts; a longer job keeps running, follow it with rag_index_status.`,
  input: indexInput.extend({
    wait: z
      .boolean({ error: 'wait must be a boolean' })
      .default(true)
      .describe(`Wait (up to ${INDEX_WAIT_MS / 1000} s) for the job to end and return its counts; false returns the queued job at once.`),
  }),
  output: jobOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, ctx, signal, progress) {
    const { deps } = ctx.engine;
    const accepted = await requestIndex(deps, ctx.caller, args, ctx.correlationId);
    // With a progressToken: a notification as the job goes from queued to running to its end.
    await progress(0, JOB_STEPS, `index job ${accepted.jobId} queued`);
    if (args.wait)
      await waitForJob(deps, accepted.jobId, INDEX_WAIT_MS, signal, (job) =>
        progress(
          JOB_STEP[job.status],
          JOB_STEPS,
          `index job ${job.jobId} ${job.status}: ${job.filesIndexed} files indexed, ${job.chunks} chunks`,
        ),
      );
    return { success: true as const, ...(await indexStatus(deps, ctx.caller, accepted.jobId)) };
  },
  render: renderJob,
});

export const ragIndexStatusTool = defineTool({
  name: 'rag_index_status',
  title: 'Status of an index job',
  description: 'Tells where an index job stands (queued, running, completed, failed) with its file and chunk counts.',
  input: jobIdInput,
  output: jobOutput,
  annotations: { readOnlyHint: true, openWorldHint: false },
  run: async (args, ctx) => ({ success: true as const, ...(await indexStatus(ctx.engine.deps, ctx.caller, args.jobId)) }),
  render: renderJob,
});

export const ragQueryTool = defineTool({
  name: 'rag_query',
  title: 'Search a code collection',
  description:
    'Finds the code in an indexed collection that answers a question or matches an identifier (hybrid search: words and meaning). ' +
    'Returns the best chunks with file, line range and score. Each call counts one toward your queries quota.',
  input: queryInput,
  output: queryAnswer,
  annotations: { readOnlyHint: true, openWorldHint: false },
  run: (args, ctx) => queryCollection(ctx.engine.deps, ctx.caller, args, ctx.correlationId),
  render(r) {
    if (r.results.length === 0) return `nothing found for "${r.query}"`;
    const parts = r.results.map((h, i) => {
      const { file, startLine, endLine, symbol, language } = h.metadata;
      return `${i + 1}. ${file}:${startLine}-${endLine}${symbol ? ` ${symbol}` : ''} (score ${h.score.toFixed(3)})\n\`\`\`${language}\n${h.content}\n\`\`\``;
    });
    return `${r.results.length} result${r.results.length === 1 ? '' : 's'} for "${r.query}"${r.cached ? ' (cached)' : ''}:\n\n${parts.join('\n\n')}`;
  },
});

export const RAG_TOOLS: readonly Tool[] = [ragSetupTool, ragIndexTool, ragIndexStatusTool, ragQueryTool];
