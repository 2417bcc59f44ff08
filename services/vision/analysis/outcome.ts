import type { Finding } from './types.ts';

/** What one group of checks produced; analyze.ts assembles these into an AnalysisResult. */
export interface Outcome {
  findings: Finding[];
  metrics: Record<string, number>;
  checksRun: string[];
  skipped: { check: string; reason: string }[];
}

export const emptyOutcome = (): Outcome => ({ findings: [], metrics: {}, checksRun: [], skipped: [] });

export function mergeOutcomes(...parts: Outcome[]): Outcome {
  const out = emptyOutcome();
  for (const part of parts) {
    out.findings.push(...part.findings);
    Object.assign(out.metrics, part.metrics);
    out.checksRun.push(...part.checksRun);
    out.skipped.push(...part.skipped);
  }
  return out;
}

/** Per-rule cap on findings, so one broken pattern repeated a thousand times stays readable. */
export const MAX_FINDINGS_PER_CHECK = 50;
