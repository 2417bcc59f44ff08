import { API_DOCS_OPERATIONS } from './api-docs.ts';
import { type ApiFace, type OpenApiDocument, openApiDocument } from './openapi.ts';
import { platformOperations } from './platform-answers.ts';

/**
 * A face's whole document: its own operations, the platform's health routes (unless the face
 * answers /health its own way and describes it), /metrics on a private listener, and the docs routes.
 */
export function faceDocument(face: ApiFace, options: { metrics: boolean }): OpenApiDocument {
  const ownHealth = face.operations.some((op) => op.method === 'get' && op.path === '/health');
  return openApiDocument({
    ...face,
    operations: [...face.operations, ...platformOperations({ health: !ownHealth, metrics: options.metrics }), ...API_DOCS_OPERATIONS],
  });
}
