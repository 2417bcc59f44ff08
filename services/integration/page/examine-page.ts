import { capture } from '../../vision/browser/capture.ts';
import { captureFailure } from '../../vision/app/capture-errors.ts';
import type { VisionDeps } from '../../vision/engine.ts';
import type { PageFacts } from './page-facts.ts';
import { probeComponent, type ProbeOptions } from './probe-component.ts';

/**
 * Loads the page in a guarded browser context (the SSRF policy and page weight of every capture)
 * and examines the component there. The capture's own screenshot is not kept: the answer is facts.
 */
export async function examinePage(
  deps: Pick<VisionDeps, 'pool' | 'config'>,
  url: string,
  options: ProbeOptions,
  tenant: string,
): Promise<PageFacts> {
  const { vision } = deps.config;
  try {
    // Browser slots are shared round-robin between customers: this capture is the caller's.
    const shot = await capture(
      deps.pool,
      { url, timeoutMs: vision.captureTimeoutMs, maxBytes: vision.captureMaxBytes, tenant },
      (page, left) => probeComponent(page, left, options),
    );
    return { url, finalUrl: shot.finalUrl, title: shot.title, ...shot.inspection };
  } catch (err) {
    throw captureFailure(err);
  }
}
