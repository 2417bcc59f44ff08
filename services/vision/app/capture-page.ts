import { randomUUID } from 'node:crypto';
import { newEvent } from '../../../events/envelope.ts';
import { publishAndApply } from '../../../events/own-events.ts';
import { checkQuota, meter } from '../../premium/meter.ts';
import { inspectPage, type ElementProbe, type PageReport } from '../analysis/page-report.ts';
import { capture, type CapturePreparation } from '../browser/capture.ts';
import type { ContextViewport } from '../browser/guarded-context.ts';
import { isCaptureError } from '../browser/capture-error.ts';
import type { VisionDeps } from '../engine.ts';
import type { CaptureSource, ScreenshotCaptured } from '../events.ts';
import type { CaptureInput } from '../input.ts';
import { visionMetrics } from '../metrics.ts';
import { screenshotsProjection } from '../screenshots.projection.ts';
import { captureFailure } from './capture-errors.ts';
import { admitStorage, type VisionCaller } from './storage-limit.ts';

export interface CaptureAnswer {
  success: true;
  screenshotId: string;
  screenshotUrl: string;
  width: number;
  height: number;
  title: string;
  finalUrl: string;
  capturedAt: string;
  /** Requests the SSRF policy or the page weight limit refused while the page loaded. */
  blockedRequests: number;
}

/** A capture as the operations that go on with it see it: the answer, and the bytes in hand. */
export interface CapturedPage {
  answer: CaptureAnswer;
  png: Buffer;
  report: PageReport;
  /** With options.stable: screenshots taken and whether the last two matched. */
  stability?: { attempts: number; stable: boolean };
}

export const screenshotPath = (screenshotId: string): string => `/api/glm/screenshots/${screenshotId}`;

/**
 * POST /api/glm/capture and the `glm_capture` tool (and the first step of analyze-by-url and of a
 * test): loads the page in a guarded browser context, takes the screenshot, and records at the same
 * moment its DOM and the page report the analyses read. The bytes go to the blob store first, then
 * glm.screenshot-captured names them: an event never points at bytes that were not stored.
 *
 * A capture holds a browser slot for up to CAPTURE_TIMEOUT_MS and keeps megabytes until retention
 * deletes it, so it is admitted first (the quota, and the customer's storage bound) and, once the
 * page is in hand, metered: one `screenshotsAnalyzed`, unless the caller meters it as part of its
 * own use (`metered: false`: an analysis of the page it captures is one use).
 */
export async function capturePage(
  deps: VisionDeps,
  caller: VisionCaller,
  input: CaptureInput,
  correlationId: string,
  options: {
    source?: CaptureSource;
    probes?: ElementProbe[];
    metered?: boolean;
    mask?: readonly string[];
    /** A test suite's viewport (scale and colour scheme too), in place of input.viewport. */
    viewport?: ContextViewport;
    /** Settle first: fonts, network, two identical screenshots in a row (capture.ts). */
    stable?: boolean;
    /** Cookies and storage before the load, steps after it (a log-in, an opened menu). */
    prepare?: CapturePreparation;
  } = {},
): Promise<CapturedPage> {
  const { vision } = deps.config;
  const metered = options.metered ?? true;
  if (metered) checkQuota(deps, caller, 'screenshotsAnalyzed', 1);
  await admitStorage(deps, caller);
  let shot;
  try {
    shot = await capture(
      deps.pool,
      {
        url: input.url,
        tenant: caller.customerId,
        ...(input.selector !== undefined ? { selector: input.selector } : {}),
        fullPage: input.fullPage,
        ...(options.viewport ? { viewport: options.viewport } : input.viewport ? { viewport: input.viewport } : {}),
        ...(input.waitFor !== undefined ? { waitFor: input.waitFor } : {}),
        ...(options.mask ? { mask: options.mask } : {}),
        ...(options.stable ? { stable: true } : {}),
        ...(options.prepare ? { prepare: options.prepare } : {}),
        timeoutMs: vision.captureTimeoutMs,
        maxBytes: vision.captureMaxBytes,
      },
      (page, left) => inspectPage(page, left, options.probes ? { probes: options.probes } : {}),
    );
  } catch (err) {
    visionMetrics.captures.inc({ source: options.source ?? 'capture', outcome: isCaptureError(err) ? err.code : 'error' });
    throw captureFailure(err);
  }
  if (metered) await meter(deps, caller, 'screenshotsAnalyzed', 1, correlationId);
  const { customerId } = caller;
  const [png, dom, report] = await Promise.all([
    deps.blobs.put(shot.png, { customerId, kind: 'png', contentType: 'image/png' }),
    deps.blobs.put(Buffer.from(shot.dom, 'utf8'), { customerId, kind: 'dom', contentType: 'text/html; charset=utf-8' }),
    deps.blobs.put(Buffer.from(JSON.stringify(shot.inspection), 'utf8'), { customerId, kind: 'report', contentType: 'application/json' }),
  ]);
  const screenshotId = randomUUID();
  const event: ScreenshotCaptured = newEvent(
    'glm.screenshot-captured',
    {
      screenshotId,
      customerId,
      keyHash: caller.keyHash,
      url: input.url,
      finalUrl: shot.finalUrl.slice(0, 8192),
      title: shot.title,
      width: shot.width,
      height: shot.height,
      fullPage: input.fullPage,
      selector: input.selector ?? null,
      viewport: viewportOf(options.viewport ?? input.viewport),
      httpStatus: shot.status,
      blobs: { png, dom, report },
      pngBytes: shot.png.length,
      blockedCount: shot.blockedCount,
      source: options.source ?? 'capture',
    },
    { correlationId },
  );
  await publishAndApply(deps.publisher, deps.db, screenshotsProjection, [event]);
  visionMetrics.captures.inc({ source: options.source ?? 'capture', outcome: 'captured' });
  return {
    answer: {
      success: true,
      screenshotId,
      screenshotUrl: `${deps.config.publicRagUrl}${screenshotPath(screenshotId)}`,
      width: shot.width,
      height: shot.height,
      title: shot.title,
      finalUrl: shot.finalUrl,
      capturedAt: event.metadata.occurredAt.toISOString(),
      blockedRequests: shot.blockedCount,
    },
    png: shot.png,
    report: shot.inspection,
    ...(shot.stability ? { stability: shot.stability } : {}),
  };
}

/** The event records the window's size in CSS pixels; the default is the browser module's. */
const viewportOf = (viewport: { width: number; height: number } | undefined) =>
  viewport ? { width: viewport.width, height: viewport.height } : { width: 1280, height: 800 };
