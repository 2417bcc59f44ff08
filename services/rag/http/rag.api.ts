import type { z } from 'zod';
import type { ApiOperation } from '../../platform/http/openapi.ts';
import { API_PATHS } from '../../premium/api-paths.ts';
import { GATED, gateResponses } from '../../premium/premium-answers.ts';
import { collectionsAnswer, deleteAnswer, indexAccepted, jobAnswer, queryAnswer, setupAnswer } from '../answers.ts';
import { COLLECTIONS_PATH } from './rag.routes.ts';
import { collectionNameInput, indexInput, jobIdInput, queryInput, setupInput } from '../input.ts';

/** The retrieval routes (rag.routes.ts) in the vision RAG face's document. */
export const ragOperations = (errorSchema: z.ZodType): ApiOperation[] => {
  const gate = gateResponses(errorSchema);
  const tags = ['rag'];
  return [
    {
      method: 'post',
      path: API_PATHS.rag.setup,
      summary: 'Set up a code collection over a project folder',
      tags,
      security: GATED,
      body: { schema: setupInput },
      responses: {
        200: { description: 'The collection.', schema: setupAnswer },
        ...gate,
        404: { description: 'A folder outside RAG_ROOTS or not found.', schema: errorSchema },
      },
    },
    {
      method: 'get',
      path: COLLECTIONS_PATH,
      summary: 'Your collections, with their counts and last index job',
      tags,
      security: GATED,
      responses: {
        200: { description: 'Every collection of yours, by name.', schema: collectionsAnswer },
        ...gate,
      },
    },
    {
      method: 'delete',
      path: `${COLLECTIONS_PATH}/:collectionName`,
      summary: 'Delete a collection of yours, with its index and pushed files',
      description: 'The project folder is never touched; the name can be set up again. 409 while an index job of it is queued or running.',
      tags,
      security: GATED,
      params: collectionNameInput,
      responses: {
        200: { description: 'Deleted.', schema: deleteAnswer },
        ...gate,
        404: { description: 'No such collection of yours.', schema: errorSchema },
        409: { description: 'An index job of it is queued or running.', schema: errorSchema },
      },
    },
    {
      method: 'post',
      path: API_PATHS.rag.index,
      summary: 'Index pushed files, or the collection’s folder',
      tags,
      security: GATED,
      body: { schema: indexInput },
      responses: {
        200: { description: 'With wait: the job, ended.', schema: jobAnswer },
        202: { description: 'The job, queued (or still running after the wait).', schema: indexAccepted },
        ...gate,
        404: { description: 'No such collection of yours.', schema: errorSchema },
        413: { description: 'A push over RAG_PUSH_BODY_LIMIT.', schema: errorSchema },
      },
    },
    {
      method: 'get',
      path: `${API_PATHS.rag.index}/:jobId`,
      summary: 'Where an index job stands',
      tags,
      security: GATED,
      params: jobIdInput,
      responses: {
        200: { description: 'The job and its counts.', schema: jobAnswer },
        ...gate,
        404: { description: 'No such job of yours.', schema: errorSchema },
      },
    },
    {
      method: 'post',
      path: API_PATHS.rag.query,
      summary: 'Search a collection',
      tags,
      security: GATED,
      body: { schema: queryInput },
      responses: {
        200: { description: 'The chunks that answer, best first.', schema: queryAnswer },
        ...gate,
        404: { description: 'No such collection of yours.', schema: errorSchema },
        409: { description: 'The collection is not indexed yet.', schema: errorSchema },
      },
    },
  ];
};
