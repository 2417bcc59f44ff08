import { z } from 'zod';
import { VECTOR_DBS } from './input.ts';

/**
 * What the retrieval operations answer, over HTTP (/api/rag/*) and as MCP tools' structured
 * content: one schema each, for the HTTP face's document and the tools' output schemas.
 */

export const setupAnswer = z.object({
  success: z.literal(true),
  message: z.string(),
  projectPath: z.string().nullable().describe('null: the collection takes pushed files only.'),
  collectionName: z.string(),
  vectorDB: z.enum(VECTOR_DBS),
});

/** An index job accepted and not finished yet (202). */
export const indexAccepted = z.object({ success: z.literal(true), jobId: z.string(), status: z.literal('queued') });

export const jobAnswer = z.object({
  success: z.literal(true),
  jobId: z.string(),
  status: z.enum(['queued', 'running', 'completed', 'failed']),
  collectionName: z.string(),
  filesIndexed: z.number().describe('Files (re)indexed: new or changed since the last run.'),
  filesUnchanged: z.number().describe('Files already indexed with the same content.'),
  filesSkipped: z.number().describe('Files left out: binary, generated, too large, ignored.'),
  filesRemoved: z.number().describe('Files gone from the project since the last run, removed from the index.'),
  chunks: z.number(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  durationMs: z.number().nullable(),
  error: z.string().optional(),
});

export const collectionsAnswer = z.object({
  success: z.literal(true),
  collections: z.array(
    z.object({
      collectionName: z.string(),
      projectPath: z.string().nullable().describe('null: the collection indexes pushed files.'),
      vectorDB: z.string(),
      files: z.number().describe('Files in the index after its last completed job.'),
      chunks: z.number(),
      indexVersion: z.number().describe('Completed index runs; 0 until the first one.'),
      indexedAt: z.string().nullable(),
      lastJob: jobAnswer.omit({ success: true }).nullable().describe('The last index job, as GET /api/rag/index/{jobId} answers it.'),
    }),
  ),
});

const hit = z.object({
  id: z.string(),
  content: z.string().describe('The code of the chunk.'),
  score: z.number().describe('Relevance; higher is better, comparable within one answer only.'),
  metadata: z.object({
    file: z.string().describe('Path of the file, relative to the project root.'),
    type: z.string().describe('What the chunk is: function, class, method, block…'),
    startLine: z.number(),
    endLine: z.number(),
    language: z.string(),
    symbol: z.string().optional().describe('The name the chunk defines, when it defines one.'),
  }),
});

export const queryAnswer = z.object({ success: z.literal(true), query: z.string(), results: z.array(hit), cached: z.boolean() });

export const deleteAnswer = z.object({ success: z.literal(true), collectionName: z.string(), deleted: z.literal(true) });
