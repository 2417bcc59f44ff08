import { z } from 'zod';

/**
 * What the integration operations answer, over HTTP (/api/integration/*) and as MCP tools'
 * structured content: one schema each, for the HTTP face's document and the tools' output schemas.
 */

const evidence = z.object({
  source: z.enum(['code', 'page']),
  file: z.string().optional(),
  startLine: z.number().optional(),
  endLine: z.number().optional(),
  selector: z.string().optional(),
  role: z.enum(['definition', 'use', 'related', 'element', 'effect']),
  snippet: z.string(),
  score: z.number(),
});

const check = z.object({
  description: z.string(),
  status: z.enum(['passed', 'failed', 'unknown']),
  detail: z.string(),
  decidedBy: z.enum(['evidence', 'model']).nullable(),
});

export const validationAnswer = z.object({
  success: z.literal(true),
  validationId: z.string(),
  component: z.string(),
  valid: z.boolean().nullable(),
  confidence: z.number(),
  modelValid: z.boolean().nullable(),
  evidence: z.array(evidence),
  checks: z.array(check),
  issues: z.array(z.string()),
  judgedByModel: z.array(z.string()),
});

export const generationAnswer = z.object({
  success: z.literal(true),
  generationId: z.string(),
  component: z.string(),
  testType: z.enum(['unit', 'integration', 'e2e', 'visual']),
  coverage: z.enum(['basic', 'comprehensive', 'exhaustive']),
  source: z.object({ file: z.string(), startLine: z.number(), endLine: z.number() }).nullable(),
  files: z.array(z.object({ path: z.string(), content: z.string(), encoding: z.literal('base64').optional() })),
  framework: z.string(),
  runCommand: z.string(),
  cases: z.array(z.object({ name: z.string(), kind: z.string(), line: z.number().optional() })),
  skipped: z.array(z.object({ reason: z.string(), line: z.number().optional() })),
});

// The sections' own fields are in report/report.types.ts; here only their place in the answer.
const section = z.record(z.string(), z.unknown());

/** The figures of a report (format json). */
export const reportAnswer = z.object({
  success: z.literal(true),
  projectName: z.string(),
  collectionName: z.string().nullable(),
  generatedAt: z.string(),
  since: z.string().nullable(),
  collections: z.array(
    z.object({
      collectionName: z.string(),
      projectPath: z.string().nullable(),
      files: z.number(),
      chunks: z.number(),
      indexedAt: z.string().nullable(),
      lastJobStatus: z.string().nullable(),
    }),
  ),
  metrics: section.optional().describe('Left out when includeMetrics is false.'),
  visualTests: section,
  validations: section,
  generations: section,
});
