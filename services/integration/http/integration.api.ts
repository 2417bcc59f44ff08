import { z } from 'zod';
import type { ApiOperation } from '../../platform/http/openapi.ts';
import { API_PATHS } from '../../premium/api-paths.ts';
import { GATED, gateResponses } from '../../premium/premium-answers.ts';
import { generationAnswer, reportAnswer, validationAnswer } from '../answers.ts';
import { generateInput, reportInput, validateInput } from '../input.ts';

/** The integration routes (integration.routes.ts) in the vision RAG face's document. */
export const integrationOperations = (errorSchema: z.ZodType): ApiOperation[] => {
  const gate = gateResponses(errorSchema);
  const tags = ['integration'];
  const failures = {
    404: { description: 'An unknown collection or component.', schema: errorSchema },
    409: { description: 'A collection not indexed yet.', schema: errorSchema },
    422: {
      description: 'A component not found on the page, in an unsupported language, or too costly to generate for.',
      schema: errorSchema,
    },
  };
  return [
    {
      method: 'post',
      path: API_PATHS.integration.validate,
      summary: 'Does a component do what its description says',
      tags,
      security: GATED,
      body: { schema: validateInput },
      responses: { 200: { description: 'The checks and their evidence.', schema: validationAnswer }, ...gate, ...failures },
    },
    {
      method: 'post',
      path: API_PATHS.integration.generate,
      summary: 'Generate runnable tests for a component',
      tags,
      security: GATED,
      body: { schema: generateInput },
      responses: { 200: { description: 'The test files.', schema: generationAnswer }, ...gate, ...failures },
    },
    {
      method: 'post',
      path: API_PATHS.integration.report,
      summary: 'A report of your collections and their use',
      tags,
      security: GATED,
      body: { schema: reportInput },
      responses: {
        200: {
          description: 'The figures (format json), or a markdown document, or a self-contained html page.',
          schema: reportAnswer,
          alternatives: { 'text/markdown': z.string(), 'text/html': z.string() },
          headers: ['Cache-Control'],
        },
        ...gate,
        404: failures[404],
      },
    },
  ];
};
