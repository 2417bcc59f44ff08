import { z } from 'zod';
import { ANALYSIS_TYPES, SEVERITIES } from './analysis/types.ts';

/**
 * What the vision operations answer, over HTTP (/api/glm/*) and as MCP tools' structured content:
 * one schema each, for the HTTP face's document and the tools' output schemas.
 */

const box = z.object({ x: z.number(), y: z.number(), width: z.number(), height: z.number() });

const finding = z.object({
  type: z.string(),
  severity: z.enum(SEVERITIES),
  message: z.string(),
  selector: z.string().optional(),
  box: box.optional(),
  evidence: z.string(),
  code: z
    .array(
      z.object({
        file: z.string(),
        startLine: z.number(),
        endLine: z.number(),
        score: z.number().describe('0-1: the file’s share of the evidence found for the element.'),
      }),
    )
    .optional()
    .describe('The files of your collection most likely to render the element, best first (at most 3).'),
});

export const captureAnswer = z.object({
  success: z.literal(true),
  screenshotId: z.string(),
  screenshotUrl: z.string(),
  width: z.number(),
  height: z.number(),
  title: z.string(),
  finalUrl: z.string(),
  capturedAt: z.string(),
  blockedRequests: z.number().describe('Requests of the page refused by the address policy or the page weight limit.'),
});

export const analyzeAnswer = z.object({
  success: z.literal(true),
  screenshotId: z.string().nullable(),
  analysisType: z.enum(ANALYSIS_TYPES),
  summary: z.string(),
  findings: z.array(finding),
  metrics: z.record(z.string(), z.number()),
  checksRun: z.array(z.string()),
  skipped: z.array(z.object({ check: z.string(), reason: z.string() })),
  codeLinks: z
    .object({
      collectionName: z.string().nullable().describe('The collection of yours searched; null when none was.'),
      findingsLinked: z.number(),
      reason: z.string().optional().describe('Why no finding, or not every finding that names an element, has code.'),
    })
    .describe('Findings traced to the code that renders their element.'),
});

export const testAnswer = z.object({
  success: z.literal(true),
  suite: z.string(),
  runId: z.string(),
  passed: z.number(),
  failed: z.number(),
  results: z.array(
    z.object({
      name: z.string(),
      type: z.enum(['visual', 'element', 'a11y', 'layout']),
      status: z.enum(['passed', 'failed']),
      message: z.string(),
      diffUrl: z.string().optional(),
      diffRatio: z.number().optional(),
      screenshotId: z.string().optional(),
      flaky: z.boolean().optional(),
    }),
  ),
});

export const acceptAnswer = z.object({
  success: z.literal(true),
  suite: z.string(),
  runId: z.string(),
  accepted: z.array(z.object({ check: z.string(), screenshotId: z.string() })),
});

export const deletedAnswer = z.object({ success: z.literal(true), deleted: z.string() });
