import { accessibilityChecks } from './accessibility-rules.ts';
import { layoutChecks } from './layout-rules.ts';
import { emptyOutcome, mergeOutcomes, type Outcome } from './outcome.ts';
import { checkComparable, decodePng, DEFAULT_DECODE_BYTES, diffPixels, scanBlank, type Pixels } from './png-checks.ts';
import { ImageRefused } from './png-header.ts';
import { parsePageReport } from './report-schema.ts';
import { SEVERITIES, type AnalysisResult, type AnalysisType, type Finding, type PageReport } from './types.ts';
import { uiElementChecks } from './ui-rules.ts';
import { baselineFindings, blankFindings, visualPageChecks } from './visual-rules.ts';

export { diffImages, type ImageDiff } from './png-checks.ts';

/**
 * The analyses: pure functions of a page report and the screenshot (no I/O, no clock), so a stored
 * capture analysed again gives the same answer. Without a report (an image known only by its URL)
 * only the checks on pixels run, and `skipped` says what did not and why.
 */

export interface AnalyzeInput {
  /** From `inspectPage` at capture time; validated again here (a stored report is read back from JSON). */
  report?: PageReport;
  png: Uint8Array;
  /** For visual-bugs and comprehensive: the screenshot to compare with. */
  baselinePng?: Uint8Array;
  /** pixelmatch's per-pixel colour threshold, 0 to 1 (default 0.1). */
  diffThreshold?: number;
  /** Bytes the decoded images and their comparison may hold; an image past it is not decoded (default 512 MB). */
  maxDecodeBytes?: number;
}

export type AnalyzeOutput = AnalysisResult & { diffPng?: Buffer };

type SingleType = Exclude<AnalysisType, 'comprehensive'>;
const SINGLE_TYPES: readonly SingleType[] = ['ui-elements', 'layout', 'accessibility', 'visual-bugs'];

/** The report-based checks of each analysis, named in `skipped` when there is no report. */
const PAGE_CHECKS: Record<SingleType, readonly string[]> = {
  'ui-elements': ['interactive-elements', 'accessible-names'],
  layout: ['overlap', 'viewport-overflow', 'container-overflow', 'off-screen', 'small-tap-target', 'misaligned'],
  accessibility: ['axe', 'axe:color-contrast'],
  'visual-bugs': ['broken-image', 'clipped-text', 'container-overflow', 'overlap'],
};

interface Context {
  report: PageReport | null;
  /** Why there is no report to read. */
  noReport: string;
  /** The decoded screenshot, decoded on first use (only the pixel checks need it): null when unreadable. */
  pixels(): Pixels | null;
  noPixels(): string;
  png: Uint8Array;
  baselinePng: Uint8Array | undefined;
  threshold: number;
  maxDecodeBytes: number;
}

interface Single {
  outcome: Outcome;
  diffPng?: Buffer;
}

export function analyze(type: AnalysisType, input: AnalyzeInput): AnalyzeOutput {
  const threshold = input.diffThreshold ?? 0.1;
  if (!(threshold >= 0 && threshold <= 1)) throw new RangeError('diffThreshold must be a number from 0 to 1');
  const context = contextOf(input, threshold);
  if (type !== 'comprehensive') {
    const { outcome, diffPng } = single(type, context);
    return { ...result(type, outcome), ...(diffPng ? { diffPng } : {}) };
  }
  const parts = SINGLE_TYPES.map((t) => ({ type: t, ...single(t, context) }));
  const merged = emptyOutcome();
  const seen = new Set<string>();
  for (const part of parts) {
    // overlap and container-overflow belong to two analyses; the union names each once.
    for (const f of part.outcome.findings) {
      const key = `${f.type}\u0000${f.selector ?? ''}\u0000${f.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      merged.findings.push(f);
    }
    for (const [k, v] of Object.entries(part.outcome.metrics)) merged.metrics[`${part.type}.${k}`] = v;
    for (const check of part.outcome.checksRun) if (!merged.checksRun.includes(check)) merged.checksRun.push(check);
    for (const s of part.outcome.skipped) if (!merged.skipped.some((o) => o.check === s.check)) merged.skipped.push(s);
  }
  // A check one analysis skips (the baseline, outside visual-bugs) but another ran is not skipped.
  merged.skipped = merged.skipped.filter((s) => !merged.checksRun.includes(s.check));
  const diffPng = parts.find((p) => p.diffPng)?.diffPng;
  return { ...result('comprehensive', merged), ...(diffPng ? { diffPng } : {}) };
}

function contextOf(input: AnalyzeInput, threshold: number): Context {
  let report: PageReport | null = null;
  let noReport = 'no page report: the image was given without a capture of its page';
  if (input.report !== undefined) {
    try {
      report = parsePageReport(input.report);
    } catch (error) {
      noReport = `the page report is not valid: ${firstLine(error)}`;
    }
  }
  const maxDecodeBytes = input.maxDecodeBytes ?? DEFAULT_DECODE_BYTES;
  let decoded: { pixels: Pixels | null; problem: string } | undefined;
  const decode = () => {
    if (decoded) return decoded;
    try {
      decoded = { pixels: decodePng(input.png, maxDecodeBytes), problem: '' };
    } catch (error) {
      const why =
        error instanceof ImageRefused && error.code === 'IMAGE_TOO_LARGE'
          ? 'the screenshot was not decoded'
          : 'the screenshot is not a readable PNG';
      decoded = { pixels: null, problem: `${why}: ${firstLine(error)}` };
    }
    return decoded;
  };
  return {
    report,
    noReport,
    pixels: () => decode().pixels,
    noPixels: () => decode().problem,
    png: input.png,
    baselinePng: input.baselinePng,
    threshold,
    maxDecodeBytes,
  };
}

const firstLine = (error: unknown): string => (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 200);

const skippedAll = (checks: readonly string[], reason: string): Outcome => ({
  ...emptyOutcome(),
  skipped: checks.map((check) => ({ check, reason })),
});

function single(type: SingleType, context: Context): Single {
  const { report } = context;
  const page = (run: (r: PageReport) => Outcome): Outcome => (report ? run(report) : skippedAll(PAGE_CHECKS[type], context.noReport));
  switch (type) {
    case 'ui-elements':
      return withoutBaseline(page(uiElementChecks), context);
    case 'layout':
      return withoutBaseline(page(layoutChecks), context);
    case 'accessibility':
      return withoutBaseline(page(accessibilityChecks), context);
    case 'visual-bugs': {
      const images = imageChecks(context);
      return { outcome: mergeOutcomes(page(visualPageChecks), images.outcome), ...(images.diffPng ? { diffPng: images.diffPng } : {}) };
    }
  }
}

function withoutBaseline(outcome: Outcome, context: Context): Single {
  if (context.baselinePng === undefined) return { outcome };
  const reason = 'only visual-bugs and comprehensive compare with a baseline';
  return { outcome: { ...outcome, skipped: [...outcome.skipped, { check: 'baseline-diff', reason }] } };
}

/** Blank regions, and the baseline difference when there is a baseline: the pixels alone. */
function imageChecks(context: Context): Single {
  const { report } = context;
  const pixels = context.pixels();
  if (pixels === null) {
    return { outcome: skippedAll(['blank-region', ...(context.baselinePng ? ['baseline-diff'] : [])], context.noPixels()) };
  }
  const out = emptyOutcome();
  const scan = scanBlank(pixels);
  // A page that fits in the viewport with a footer pinned to the bottom shows a gap whose size is the
  // viewport's doing, not the page's: a band ending in the last quarter of such a page is not a hole.
  const fitsViewport = report !== null && report.document.height <= report.viewport.height + 1;
  const bands = fitsViewport ? scan.bands.filter((b) => b.top + b.height < pixels.height * 0.75) : scan.bands;
  out.findings.push(...blankFindings({ ...scan, bands }));
  out.metrics.blankBands = bands.length;
  out.metrics.blank = scan.blank ? 1 : 0;
  out.checksRun.push('blank-region');
  if (context.baselinePng === undefined) return { outcome: out };
  let baseline: Pixels;
  try {
    checkComparable(context.png, context.baselinePng, context.maxDecodeBytes);
    baseline = decodePng(context.baselinePng, context.maxDecodeBytes);
  } catch (error) {
    const why =
      error instanceof ImageRefused && error.code === 'IMAGE_TOO_LARGE'
        ? 'the baseline was not compared'
        : 'the baseline is not a readable PNG';
    out.skipped.push({ check: 'baseline-diff', reason: `${why}: ${firstLine(error)}` });
    return { outcome: out };
  }
  const diff = diffPixels(pixels, baseline, context.threshold);
  out.findings.push(...baselineFindings(diff, pixels, baseline));
  Object.assign(out.metrics, { diffPixels: diff.diffPixels, diffRatio: diff.diffRatio, baselineSameSize: diff.sameSize ? 1 : 0 });
  out.checksRun.push('baseline-diff');
  return { outcome: out, ...(diff.diffPng ? { diffPng: diff.diffPng } : {}) };
}

function result(type: AnalysisType, outcome: Outcome): AnalysisResult {
  return {
    analysisType: type,
    summary: summarize(type, outcome),
    findings: outcome.findings,
    metrics: outcome.metrics,
    checksRun: outcome.checksRun,
    skipped: outcome.skipped,
  };
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

function summarize(type: AnalysisType, outcome: Outcome): string {
  const listed = outcome.findings.filter((f) => f.type === 'interactive-element').length;
  const problems: Finding[] = outcome.findings.filter((f) => f.type !== 'interactive-element');
  const bySeverity = [...SEVERITIES]
    .reverse()
    .map((s) => [s, problems.filter((f) => f.severity === s).length] as const)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${s}`)
    .join(', ');
  const found = problems.length === 0 ? 'no problems found' : `${plural(problems.length, 'problem')} found (${bySeverity})`;
  const ran = outcome.checksRun.length === 0 ? 'no check could run' : `${plural(outcome.checksRun.length, 'check')} run`;
  const skipped =
    outcome.skipped.length === 0
      ? ''
      : `, ${outcome.skipped.length} skipped (${outcome.skipped[0]!.reason}${outcome.skipped.length > 1 ? ', ...' : ''})`;
  const elements = listed > 0 || type === 'ui-elements' ? `${plural(listed, 'interactive element')} listed, ` : '';
  return `${type}: ${elements}${found}; ${ran}${skipped}.`;
}
