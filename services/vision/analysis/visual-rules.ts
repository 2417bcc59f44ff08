import { describeBox } from './geometry.ts';
import { overlapFindings, textOverflowFindings } from './layout-rules.ts';
import { MAX_FINDINGS_PER_CHECK, type Outcome } from './outcome.ts';
import { BLANK_BAND_MIN_PX, BLANK_BAND_MIN_SHARE, type BlankScan, type ImageDiff } from './png-checks.ts';
import type { Finding, ImageFact, PageReport, Severity } from './types.ts';

/**
 * visual-bugs: what a person looking at the screenshot would call broken. The page-level checks read
 * the report; blank regions and the baseline difference read the pixels (see png-checks.ts).
 */

/** An image the browser finished with and has no picture for. */
export function isBroken(img: ImageFact): boolean {
  if (!img.complete || img.naturalWidth > 0 || img.src === '') return false;
  // An SVG without intrinsic size also reports naturalWidth 0: only a failed decode() condemns one.
  return img.decodeFailed || !/\.svg(\?|#|$)|^data:image\/svg/i.test(img.src);
}

export function brokenImageFindings(report: PageReport): Finding[] {
  return report.images
    .filter(isBroken)
    .slice(0, MAX_FINDINGS_PER_CHECK)
    .map((img) => ({
      type: 'broken-image',
      severity: img.visible ? 'serious' : 'moderate',
      message: `an image failed to load${img.alt ? ` ("${img.alt.slice(0, 60)}")` : ''}: ${img.src.slice(0, 120)}`,
      selector: img.selector,
      box: img.box,
      evidence: `complete, naturalWidth 0${img.decodeFailed ? ', decode() rejected' : ''}; src ${img.src}; ${describeBox(img.box)}${img.visible ? '' : ', not visible'}`,
    }));
}

export function clippedTextFindings(report: PageReport): Finding[] {
  return report.textIssues
    .filter((t) => t.kind === 'clipped')
    .slice(0, MAX_FINDINGS_PER_CHECK)
    .map((t) => ({
      type: 'clipped-text',
      severity: 'moderate',
      message: `text is cut off: "${t.text.slice(0, 60)}"`,
      selector: t.selector,
      box: t.box,
      evidence: `the text needs ${t.overflowPx} px more along ${t.axis} than ${t.containerSelector} (${describeBox(t.containerBox)}) shows; that box hides its overflow`,
    }));
}

export function blankFindings(scan: BlankScan): Finding[] {
  if (scan.blank) {
    return [
      {
        type: 'blank-region',
        severity: 'serious',
        message: scan.colour
          ? `the screenshot is blank: one flat colour (${scan.colour})`
          : 'the screenshot is blank: flat colour bands and nothing else',
        box: { x: 0, y: 0, width: scan.width, height: scan.height },
        evidence: `no row of the ${scan.width}×${scan.height} image has content (every row is one colour, within 8 per channel)`,
      },
    ];
  }
  return scan.bands.slice(0, MAX_FINDINGS_PER_CHECK).map((band) => ({
    type: 'blank-region',
    severity: 'moderate',
    message: `an empty ${band.height} px band (${band.colour}) between content: something may have failed to render`,
    box: { x: 0, y: band.top, width: scan.width, height: band.height },
    evidence: `rows ${band.top} to ${band.top + band.height - 1} are one colour, ${Math.round((band.height / scan.height) * 100)} % of the ${scan.height} px height (at least ${BLANK_BAND_MIN_PX} px and ${BLANK_BAND_MIN_SHARE * 100} % count), with content above and below`,
  }));
}

function diffSeverity(ratio: number): Severity {
  if (ratio < 0.001) return 'minor';
  return ratio < 0.05 ? 'moderate' : 'serious';
}

export function baselineFindings(
  diff: ImageDiff,
  size: { width: number; height: number },
  baseline: { width: number; height: number },
): Finding[] {
  const share = `${(diff.diffRatio * 100).toFixed(3)} % of pixels (${diff.diffPixels})`;
  if (!diff.sameSize) {
    return [
      {
        type: 'baseline-diff',
        severity: 'moderate',
        message: `the screenshot is ${size.width}×${size.height} and the baseline ${baseline.width}×${baseline.height}: sizes differ`,
        ...(diff.changed ? { box: diff.changed } : {}),
        evidence: `compared where they overlap; every pixel outside the common area counts as changed: ${share} differ`,
      },
    ];
  }
  if (diff.diffPixels === 0) return [];
  return [
    {
      type: 'baseline-diff',
      severity: diffSeverity(diff.diffRatio),
      message: `the screenshot differs from the baseline in ${share}`,
      ...(diff.changed ? { box: diff.changed } : {}),
      evidence: `pixelmatch over ${diff.width}×${diff.height}; changes lie within ${diff.changed ? describeBox(diff.changed) : 'nothing'}`,
    },
  ];
}

/** The report-based half of visual-bugs. */
export function visualPageChecks(report: PageReport): Outcome {
  const broken = brokenImageFindings(report);
  const clipped = clippedTextFindings(report);
  const overflowing = textOverflowFindings(report.textIssues);
  const overlaps = overlapFindings(report);
  return {
    findings: [...broken, ...clipped, ...overflowing, ...overlaps],
    metrics: {
      images: report.images.length,
      brokenImages: broken.length,
      clippedText: clipped.length,
      overflowingText: overflowing.length,
      overlaps: overlaps.length,
    },
    checksRun: ['broken-image', 'clipped-text', 'container-overflow', 'overlap'],
    skipped: [],
  };
}
