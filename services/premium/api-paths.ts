/** GET /api: where each operation lives, as the specification lists them. */
export const API_PATHS = {
  health: '/health',
  rag: { setup: '/api/rag/setup', query: '/api/rag/query', index: '/api/rag/index' },
  glm: { capture: '/api/glm/capture', analyze: '/api/glm/analyze', test: '/api/glm/test' },
  integration: { validate: '/api/integration/validate', generate: '/api/integration/generate', report: '/api/integration/report' },
} as const;
