import type { ImageDiff } from '../analysis/png-checks.ts';

/** The limits of a visual check: a share of the pixels and, when given, a count; both must hold. */
export interface DiffLimits {
  maxDiffRatio: number;
  maxDiffPixels?: number | undefined;
}

/**
 * Whether a comparison with the baseline passes, and the sentence that says why. A ratio alone lets
 * a large page hide a small but real change (0.1 % of 1280×4000 is 5 120 pixels), so a count may be
 * set beside it, as Playwright's maxDiffPixels beside maxDiffPixelRatio.
 */
export function judgeDiff(diff: Pick<ImageDiff, 'diffPixels' | 'diffRatio'>, limits: DiffLimits): { ok: boolean; message: string } {
  const share = `${(diff.diffRatio * 100).toFixed(3)} % of pixels differ (${diff.diffPixels})`;
  const overRatio = diff.diffRatio > limits.maxDiffRatio;
  const overCount = limits.maxDiffPixels !== undefined && diff.diffPixels > limits.maxDiffPixels;
  const ratio = `${limits.maxDiffRatio * 100} %`;
  const count = limits.maxDiffPixels !== undefined ? ` and ${limits.maxDiffPixels} pixels` : '';
  if (!overRatio && !overCount) return { ok: true, message: `${share}, within ${ratio}${count}` };
  const over = [overRatio ? ratio : null, overCount ? `${limits.maxDiffPixels} pixels` : null].filter((x) => x !== null).join(' and ');
  return { ok: false, message: `${share}, over ${over}` };
}
