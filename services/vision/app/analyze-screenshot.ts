import { randomUUID } from 'node:crypto';
import { newEvent } from '../../../events/envelope.ts';
import { publishAndApply } from '../../../events/own-events.ts';
import { notFound, type Caller } from '../../premium/caller.ts';
import { checkQuota, meter } from '../../premium/meter.ts';
import { analysesProjection } from '../analyses.projection.ts';
import { parsePageReport, type PageReport } from '../analysis/page-report.ts';
import { SEVERITIES, type AnalysisResult, type Finding, type Severity } from '../analysis/types.ts';
import type { VisionDeps } from '../engine.ts';
import type { AnalysisCompleted } from '../events.ts';
import type { AnalyzeInput } from '../input.ts';
import { getScreenshot } from '../screenshots.projection.ts';
import { capturePage, screenshotPath } from './capture-page.ts';
import { linkFindings, type CodeLinksSummary, type CodeSearch } from './code-links.ts';
import { fetchImageAsPng } from './fetch-image.ts';
import { analyzeImageTask, decodeBudget, runImageTask } from './image-work.ts';
import type { VisionCaller } from './storage-limit.ts';

export interface AnalyzeAnswer extends Omit<AnalysisResult, 'findings'> {
  success: true;
  /** The screenshot analysed; null for an image given only by URL. */
  screenshotId: string | null;
  findings: Finding[];
  /** Which collection of code the findings were traced to, and why some or all were not. */
  codeLinks: CodeLinksSummary;
}

interface Source {
  screenshotId: string | null;
  png: Buffer;
  report: PageReport | undefined;
}

/** A stored screenshot of the caller's, with its page report; another customer's is not found. */
export async function loadScreenshot(deps: VisionDeps, caller: Caller, screenshotId: string): Promise<{ png: Buffer; report: PageReport }> {
  const shot = await getScreenshot(deps.db, screenshotId);
  if (!shot || shot.customerId !== caller.customerId) throw notFound(`screenshot ${screenshotId}`);
  const [png, report] = await Promise.all([deps.blobs.get(shot.blobs.png), deps.blobs.get(shot.blobs.report)]);
  if (!png || !report) throw notFound(`screenshot ${screenshotId}`);
  return { png, report: parsePageReport(JSON.parse(report.toString('utf8')) as unknown) };
}

/** A screenshot URL this service handed out, read back as its id; anything else is just an image URL. */
function ownScreenshotId(deps: VisionDeps, url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const prefix = `${deps.config.publicRagUrl}${screenshotPath('')}`;
  if (!`${parsed.origin}${parsed.pathname}`.startsWith(prefix)) return null;
  const id = parsed.pathname.slice(screenshotPath('').length);
  return /^[0-9a-f-]{36}$/.test(id) ? id : null;
}

async function resolveSource(deps: VisionDeps, caller: VisionCaller, input: AnalyzeInput, correlationId: string): Promise<Source> {
  const id = input.screenshotId ?? (input.screenshotUrl ? ownScreenshotId(deps, input.screenshotUrl) : null);
  if (id) return { screenshotId: id, ...(await loadScreenshot(deps, caller, id)) };
  if (input.screenshotUrl)
    return { screenshotId: null, png: await fetchImageAsPng(deps, input.screenshotUrl, caller.customerId), report: undefined };
  // The capture is this analysis's screenshot: metered below as the analysis's one use.
  const captured = await capturePage(
    deps,
    caller,
    { url: input.url!, fullPage: input.fullPage, ...(input.viewport ? { viewport: input.viewport } : {}) },
    correlationId,
    {
      source: 'analyze',
      metered: false,
    },
  );
  return { screenshotId: captured.answer.screenshotId, png: captured.png, report: captured.report };
}

const countBy = <K extends string>(items: readonly { [P in 'severity']: K }[], keys: readonly K[]): Record<K, number> =>
  Object.fromEntries(keys.map((k) => [k, items.filter((i) => i.severity === k).length])) as Record<K, number>;

/**
 * POST /api/glm/analyze and the `glm_analyze` tool: one analysis of a stored screenshot, a page
 * captured now, or an image given by URL (image-level checks only, and the answer says which ran).
 * Each analysis uses one of the key's `screenshotsAnalyzed`, recorded once the source is in hand, so a
 * page that cannot be loaded costs nothing. The analysis itself (decoding the PNG, its pixels)
 * runs on the image pool, within its time and memory budget, never on the serving event loop.
 */
export async function analyzeScreenshot(
  deps: VisionDeps,
  caller: VisionCaller,
  input: AnalyzeInput,
  correlationId: string,
): Promise<AnalyzeAnswer> {
  const started = Date.now();
  checkQuota(deps, caller, 'screenshotsAnalyzed', 1);
  const baselinePng = input.baselineScreenshotId ? (await loadScreenshot(deps, caller, input.baselineScreenshotId)).png : undefined;
  // Before the capture: a named collection that is not the caller's fails the request at no cost.
  const code = deps.codeLinker ? await deps.codeLinker.open(caller, input.collectionName) : { why: 'code links are not served here' };
  const source = await resolveSource(deps, caller, input, correlationId);
  await meter(deps, caller, 'screenshotsAnalyzed', 1, correlationId);
  const result = await runImageTask(
    deps.images,
    analyzeImageTask,
    {
      type: input.analysisType,
      ...(source.report ? { report: source.report } : {}),
      png: source.png,
      ...(baselinePng ? { baselinePng } : {}),
      maxDecodeBytes: decodeBudget(deps.config.vision.work.memoryMb),
    },
    caller.customerId,
  );
  const types = new Map<string, number>();
  for (const f of result.findings) types.set(f.type, (types.get(f.type) ?? 0) + 1);
  const event: AnalysisCompleted = newEvent(
    'glm.analysis-completed',
    {
      analysisId: randomUUID(),
      customerId: caller.customerId,
      keyHash: caller.keyHash,
      screenshotId: source.screenshotId,
      analysisType: input.analysisType,
      findings: countBy<Severity>(result.findings, SEVERITIES),
      findingTypes: [...types].map(([type, count]) => ({ type, count })).slice(0, 200),
      checksRun: result.checksRun,
      durationMs: Date.now() - started,
    },
    { correlationId },
  );
  await publishAndApply(deps.publisher, deps.db, analysesProjection, [event]);
  const linked = await traceToCode(result.findings, source.report, code);
  return { success: true, screenshotId: source.screenshotId, ...result, findings: linked.findings, codeLinks: linked.summary };
}

async function traceToCode(
  findings: Finding[],
  report: PageReport | undefined,
  code: CodeSearch | { why: string },
): Promise<{ findings: Finding[]; summary: CodeLinksSummary }> {
  if ('why' in code) return { findings, summary: { collectionName: null, findingsLinked: 0, reason: code.why } };
  if (!report) {
    const why = 'an image given only by URL names no page element';
    return { findings, summary: { collectionName: code.collectionName, findingsLinked: 0, reason: why } };
  }
  try {
    return await linkFindings(findings, report.clues ?? [], code);
  } catch {
    // The findings stand on their own: a failed search costs their code, not the analysis.
    return { findings, summary: { collectionName: code.collectionName, findingsLinked: 0, reason: 'the code search failed' } };
  }
}
