import { z } from 'zod';

/**
 * Request bodies of the retrieval service, validated into typed input (pure). The descriptions are
 * what an MCP client's model reads to call the tools right, so they say what a value means here.
 */

/** A leading dot is kept for the platform's own collections (the shared memory's). */
export const COLLECTION_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}$/;

const collectionName = z
  .string({ error: 'collectionName is required' })
  .regex(COLLECTION_NAME, { error: 'collectionName must be 1-64 of A-Z a-z 0-9 _ . -, not starting with a dot' })
  .describe('Name of one of your collections (1-64 of A-Z a-z 0-9 _ . -); each customer has their own names.');

/** DELETE /api/rag/collections/{collectionName}'s path. */
export const collectionNameInput = z.object({ collectionName });

/** The most chunks one query may ask for. */
export const TOP_K_MAX = 50;

/**
 * The vector stores a collection may name. A deployment serves exactly one, its index engine
 * (vector-db.ts): `local` (embedded SQLite) or `pgvector` (PostgreSQL); the others are known names no
 * deployment of svc serves, refused with the one it has.
 */
export const VECTOR_DBS = ['local', 'pgvector', 'qdrant', 'weaviate', 'pinecone'] as const;
export type VectorDb = (typeof VECTOR_DBS)[number];

export const setupInput = z.object({
  projectPath: z
    .string({ error: 'projectPath must be a string' })
    .min(1, { error: 'projectPath must not be empty' })
    .max(4096)
    .optional()
    .describe(
      "Absolute path of the project folder on the server; it must lie inside one of the server's RAG_ROOTS. Left out: a collection of pushed files only (POST /api/rag/index with files), which needs no folder on the server.",
    ),
  collectionName,
  vectorDB: z
    .enum(VECTOR_DBS, { error: `vectorDB must be one of ${VECTOR_DBS.join(', ')}` })
    .optional()
    .describe(
      'Where the vectors live. Leave it out for the store this deployment serves ("local", its embedded index, or "pgvector", its shared PostgreSQL); any other value is refused with the one it has.',
    ),
});

export const pushedFile = z.object({
  path: z
    .string({ error: 'files[].path is required' })
    .min(1)
    .max(1024)
    .describe('Path relative to the project root, with / separators (e.g. "src/cart.ts").'),
  content: z.string({ error: 'files[].content is required' }).describe('The whole text of the file (UTF-8; binary files are refused).'),
});

export const indexInput = z.object({
  collectionName,
  files: z
    .array(pushedFile, { error: 'files must be an array of {path, content}' })
    .optional()
    .describe("Files to index, as pushed by the client. Leave out to index the collection's project folder on the server."),
  wait: z.boolean({ error: 'wait must be a boolean' }).default(false).describe('Answer once the job has ended instead of at once.'),
});

export const queryInput = z.object({
  query: z
    .string({ error: 'query is required' })
    .trim()
    .min(1, { error: 'query is required' })
    .max(2000, { error: 'query is at most 2000 characters' })
    .describe('What to find, in words or code: a question ("where are failed payments retried?"), an identifier, an error message.'),
  collectionName,
  topK: z
    .number({ error: 'topK must be a number' })
    .int({ error: 'topK must be a whole number' })
    .min(1, { error: `topK is 1-${TOP_K_MAX}` })
    .max(TOP_K_MAX, { error: `topK is 1-${TOP_K_MAX}` })
    .default(5)
    .describe('How many code chunks to return, best first (1-50).'),
});

export const jobIdInput = z.object({
  jobId: z
    .string({ error: 'jobId is required' })
    .min(1, { error: 'jobId is required' })
    .max(128)
    .describe('The jobId an index request answered with.'),
});

export type SetupInput = z.infer<typeof setupInput>;
export type IndexInput = z.infer<typeof indexInput>;
export type QueryInput = z.infer<typeof queryInput>;
