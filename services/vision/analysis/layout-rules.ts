import { area, centre, describeBox, distanceToBox, intersection, round2 } from './geometry.ts';
import { MAX_FINDINGS_PER_CHECK, type Outcome } from './outcome.ts';
import type { Box, Finding, InteractiveElement, PageReport, PlacedElement, SiblingGroup, TextIssue } from './types.ts';

/**
 * layout: geometry of the page as laid out at the capture's viewport. Every rule reads the report
 * only (pure); the thresholds are explained in README.md.
 */

/** Less than this many square pixels of intersection is anti-aliasing and rounding, not an overlap. */
export const MIN_OVERLAP_PX2 = 4;
/** WCAG 2.2 success criterion 2.5.8 Target Size (Minimum), level AA. */
export const MIN_TARGET_PX = 24;
/** Start edges this far apart (inclusive) look like a mistake; more looks deliberate (an indent). */
export const MISALIGNED_MIN_PX = 1;
export const MISALIGNED_MAX_PX = 3;

const cap = (findings: Finding[]): Finding[] => findings.slice(0, MAX_FINDINGS_PER_CHECK);

const rectsOf = (e: InteractiveElement): Box[] => (e.rects && e.rects.length > 0 ? e.rects : [e.box]);

/** Largest intersection of the two elements' line boxes (a wrapped link is several boxes, not one). */
function overlapOf(a: InteractiveElement, b: InteractiveElement): Box | null {
  let best: Box | null = null;
  for (const ra of rectsOf(a)) {
    for (const rb of rectsOf(b)) {
      const hit = intersection(ra, rb);
      if (area(hit) > area(best)) best = hit;
    }
  }
  return best;
}

export function overlapFindings(report: PageReport): Finding[] {
  const shown = report.interactive.filter((e) => e.visible);
  const out: Finding[] = [];
  for (let i = 0; i < shown.length; i++) {
    for (let j = i + 1; j < shown.length; j++) {
      const a = shown[i]!;
      const b = shown[j]!;
      // A control inside another (a button in a clickable card) is nested by design, not overlapping.
      if (a.within.includes(b.index) || b.within.includes(a.index)) continue;
      const hit = overlapOf(a, b);
      if (area(hit) < MIN_OVERLAP_PX2 || hit === null) continue;
      out.push({
        type: 'overlap',
        severity: 'serious',
        message: `${a.role} "${a.name || a.selector}" and ${b.role} "${b.name || b.selector}" overlap: one covers part of the other and may take its clicks`,
        selector: a.selector,
        box: hit,
        evidence: `${a.selector} ${describeBox(a.box)} and ${b.selector} ${describeBox(b.box)} share ${round2(area(hit))} px² (${describeBox(hit)}); neither contains the other in the DOM`,
      });
    }
  }
  return cap(out);
}

export function viewportOverflowFindings(report: PageReport): Finding[] {
  const { viewport, document } = report;
  const scrolls = document.width > viewport.width + 1;
  const out: Finding[] = report.wideElements.map((e) => ({
    type: 'viewport-overflow',
    severity: scrolls ? 'serious' : 'moderate',
    message: scrolls
      ? `<${e.tag}> reaches past the right edge of the viewport and makes the page scroll sideways`
      : `<${e.tag}> reaches past the right edge of the viewport and is cut off there`,
    selector: e.selector,
    box: e.box,
    evidence: `right edge at ${round2(e.box.x + e.box.width)} px, viewport ${viewport.width} px wide (${round2(e.box.x + e.box.width - viewport.width)} px over); document ${document.width} px wide`,
  }));
  if (scrolls && out.length === 0) {
    out.push({
      type: 'viewport-overflow',
      severity: 'serious',
      message: 'the page scrolls sideways, but no single element was found to cause it',
      box: { x: viewport.width, y: 0, width: document.width - viewport.width, height: document.height },
      evidence: `document ${document.width} px wide, viewport ${viewport.width} px`,
    });
  }
  return cap(out);
}

export function textOverflowFindings(issues: readonly TextIssue[]): Finding[] {
  return cap(
    issues
      .filter((t) => t.kind === 'overflow')
      .map((t) => ({
        type: 'container-overflow',
        severity: 'moderate' as const,
        message: `text spills out of its box and may run over what is next to it: "${t.text.slice(0, 60)}"`,
        selector: t.selector,
        box: t.box,
        evidence: `the text reaches ${t.overflowPx} px past ${t.containerSelector} (${describeBox(t.containerBox)}) along ${t.axis}; that box lets it overflow visibly`,
      })),
  );
}

export function offScreenFindings(report: PageReport): Finding[] {
  return cap(
    report.offScreen
      .filter((e) => !e.revealsOnFocus)
      .map((e) => ({
        type: 'off-screen',
        severity: 'moderate' as const,
        message: `<${e.tag}> is placed entirely outside the page: nobody sees it, yet screen readers read it${e.text ? `: "${e.text.slice(0, 60)}"` : ''}`,
        selector: e.selector,
        box: e.box,
        evidence: `${describeBox(e.box)}, outside the ${report.document.width}×${report.document.height} document; not a visually-hidden (clip) idiom and not shown on focus`,
      })),
  );
}

/**
 * WCAG 2.5.8: targets at least 24×24 CSS px, except a target whose 24 px circle (centred on it)
 * touches no other target and no other small target's circle (the spacing exception), a link inside
 * a sentence (inline) and a control the browser sizes itself (user-agent control).
 */
export function tapTargetFindings(report: PageReport): Finding[] {
  const targets = report.interactive.filter((e) => e.visible && !e.disabled);
  const small = (e: InteractiveElement) => e.box.width < MIN_TARGET_PX || e.box.height < MIN_TARGET_PX;
  const radius = MIN_TARGET_PX / 2;
  const out: Finding[] = [];
  for (const t of targets) {
    if (!small(t) || t.inline || t.userAgentSized) continue;
    const c = centre(t.box);
    const crowding = targets.find((o) => {
      if (o === t || o.within.includes(t.index) || t.within.includes(o.index)) return false;
      if (distanceToBox(c, o.box) < radius) return true;
      const co = centre(o.box);
      return small(o) && !o.inline && !o.userAgentSized && Math.hypot(c.x - co.x, c.y - co.y) < MIN_TARGET_PX;
    });
    if (!crowding) continue;
    out.push({
      type: 'small-tap-target',
      severity: 'serious',
      message: `${t.role} "${t.name || t.selector}" is ${round2(t.box.width)}×${round2(t.box.height)} px, under the 24×24 minimum, and too close to another target`,
      selector: t.selector,
      box: t.box,
      evidence: `WCAG 2.5.8 (AA) asks 24×24 CSS px; a 24 px circle on its centre reaches ${crowding.selector} ${describeBox(crowding.box)}; not inline in a sentence, not a browser-sized control`,
    });
  }
  return cap(out);
}

type Line = 'left' | 'right' | 'top' | 'bottom' | 'centreX' | 'centreY';

const position = (box: Box, line: Line): number => {
  switch (line) {
    case 'left':
      return box.x;
    case 'right':
      return box.x + box.width;
    case 'top':
      return box.y;
    case 'bottom':
      return box.y + box.height;
    case 'centreX':
      return box.x + box.width / 2;
    case 'centreY':
      return box.y + box.height / 2;
  }
};

/** The line the children are meant to share, from the parent's alignment; null when it cannot be told. */
function startLine(group: SiblingGroup): Line | null {
  const align = group.alignItems;
  if (group.direction === 'column') {
    if (align === 'center') return 'centreX';
    const end = /(^|-)end$|right/.test(align);
    return (group.textDirection === 'rtl') !== end ? 'right' : 'left';
  }
  if (align.includes('baseline')) return null; // text baselines decide, which boxes cannot show
  if (align === 'center') return 'centreY';
  return /(^|-)end$/.test(align) ? 'bottom' : 'top';
}

/** The value most children share (within half a pixel), and how many share it. */
function consensus(values: readonly number[]): { value: number; count: number } {
  let best = { value: values[0] ?? 0, count: 0 };
  for (const v of values) {
    const count = values.filter((w) => Math.abs(w - v) <= 0.5).length;
    if (count > best.count) best = { value: v, count };
  }
  return best;
}

export function misalignmentFindings(report: PageReport): Finding[] {
  const out: Finding[] = [];
  for (const group of report.siblingGroups) {
    const line = startLine(group);
    if (line === null || group.children.length < 3) continue;
    const agreed = consensus(group.children.map((c) => position(c.box, line)));
    // Fewer than half agreeing means there is no common edge to be off from.
    if (agreed.count < 2 || agreed.count * 2 < group.children.length) continue;
    // A centred stack of boxes of different widths has ragged start edges by design; so does a row
    // whose items share their centre or end line instead.
    const alternatives: Line[] = group.direction === 'column' ? ['centreX'] : ['centreY', 'bottom'];
    const shared = alternatives.map((alt) => ({ alt, agreed: consensus(group.children.map((c) => position(c.box, alt))) }));
    for (const child of group.children) {
      const off = Math.abs(position(child.box, line) - agreed.value);
      if (off < MISALIGNED_MIN_PX || off > MISALIGNED_MAX_PX) continue;
      const excused = shared.some(
        ({ alt, agreed: a }) => a.count * 2 > group.children.length && Math.abs(position(child.box, alt) - a.value) <= 0.5,
      );
      if (excused) continue;
      out.push(misaligned(group, child, line, agreed, off));
    }
  }
  return cap(out);
}

function misaligned(group: SiblingGroup, child: PlacedElement, line: Line, agreed: { value: number; count: number }, off: number): Finding {
  const edge = line.startsWith('centre') ? 'centre' : line;
  return {
    type: 'misaligned',
    severity: 'minor',
    message: `<${child.tag}> is ${round2(off)} px out of line with its siblings in a ${group.direction}`,
    selector: child.selector,
    box: child.box,
    evidence: `${edge} edge at ${round2(position(child.box, line))} px where ${agreed.count} of ${group.children.length} children of ${group.parentSelector} have ${round2(agreed.value)} px`,
  };
}

export function layoutChecks(report: PageReport): Outcome {
  const overlaps = overlapFindings(report);
  const overflow = viewportOverflowFindings(report);
  const container = textOverflowFindings(report.textIssues);
  const offScreen = offScreenFindings(report);
  const targets = tapTargetFindings(report);
  const aligned = misalignmentFindings(report);
  return {
    findings: [...overlaps, ...overflow, ...container, ...offScreen, ...targets, ...aligned],
    metrics: {
      overlaps: overlaps.length,
      viewportOverflow: overflow.length,
      containerOverflow: container.length,
      offScreen: offScreen.length,
      smallTapTargets: targets.length,
      misaligned: aligned.length,
      documentWidth: report.document.width,
      viewportWidth: report.viewport.width,
    },
    checksRun: ['overlap', 'viewport-overflow', 'container-overflow', 'off-screen', 'small-tap-target', 'misaligned'],
    skipped: [],
  };
}
