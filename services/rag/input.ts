import { z } from 'zod';

/** Request bodies of the retrieval service, validated into typed input (pure). */

export const COLLECTION_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

const collectionName = z
  .string({ error: 'collectionName is required' })
  .regex(COLLECTION_NAME, { error: 'collectionName must be 1-64 of A-Z a-z 0-9 _ . -' });

export const VECTOR_DBS = ['local', 'qdrant', 'weaviate', 'pinecone'] as const;
export type VectorDb = (typeof VECTOR_DBS)[number];

export const setupInput = z.object({
  projectPath: z.string({ error: 'projectPath is required' }).min(1, { error: 'projectPath is required' }).max(4096),
  collectionName,
  vectorDB: z.enum(VECTOR_DBS, { error: `vectorDB must be one of ${VECTOR_DBS.join(', ')}` }).default('local'),
});

export const pushedFile = z.object({
  path: z.string({ error: 'files[].path is required' }).min(1).max(1024),
  content: z.string({ error: 'files[].content is required' }),
});

export const indexInput = z.object({
  collectionName,
  files: z.array(pushedFile, { error: 'files must be an array of {path, content}' }).optional(),
  wait: z.boolean({ error: 'wait must be a boolean' }).default(false),
});

export const queryInput = z.object({
  query: z.string({ error: 'query is required' }).trim().min(1, { error: 'query is required' }).max(2000, { error: 'query is at most 2000 characters' }),
  collectionName,
  topK: z.number({ error: 'topK must be a number' }).int({ error: 'topK must be a whole number' }).min(1, { error: 'topK is 1-50' }).max(50, { error: 'topK is 1-50' }).default(5),
});

export type SetupInput = z.infer<typeof setupInput>;
export type IndexInput = z.infer<typeof indexInput>;
export type QueryInput = z.infer<typeof queryInput>;
