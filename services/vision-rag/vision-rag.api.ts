import { integrationOperations } from '../integration/http/integration.api.ts';
import type { ApiFace } from '../platform/http/openapi.ts';
import { VERSION } from '../platform/version.ts';
import { apiPathsAnswer, ragErrorAnswer, ragHealthAnswer } from '../premium/premium-answers.ts';
import { ragOperations } from '../rag/http/rag.api.ts';
import { memoryOperations } from '../rag/memory/memory.api.ts';
import { glmOperations } from '../vision/http/glm.api.ts';

/** The vision RAG face's document: retrieval, vision and integration behind one gate. */
export const visionRagApi: ApiFace = {
  name: 'rag',
  title: 'svc vision RAG',
  description:
    'Code retrieval (/api/rag), page capture, analysis and visual tests (/api/glm), component validation, test generation and reports (/api/integration), the team’s shared memory (/api/memory), behind the key gate. Every route, body and status: docs/api.md.',
  version: VERSION,
  errorSchema: ragErrorAnswer,
  operations: [
    {
      method: 'get',
      path: '/api',
      summary: 'Where each operation lives',
      tags: ['rag'],
      responses: { 200: { description: 'The paths.', schema: apiPathsAnswer } },
    },
    ...ragOperations(ragErrorAnswer),
    ...memoryOperations(ragErrorAnswer),
    ...glmOperations(ragErrorAnswer),
    ...integrationOperations(ragErrorAnswer),
    {
      method: 'get',
      path: '/health',
      summary: 'Health, and which features work in this deployment',
      tags: ['health'],
      responses: {
        200: { description: 'Healthy or degraded.', schema: ragHealthAnswer },
        503: { description: 'Unhealthy.', schema: ragHealthAnswer },
      },
    },
  ],
};
