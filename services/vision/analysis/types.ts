/**
 * The analyses' contract (pure types): what a capture records of the live page (`PageReport`, kept
 * with the screenshot so a stored screenshot can be analysed later), and what an analysis answers.
 */

export const ANALYSIS_TYPES = ['ui-elements', 'layout', 'accessibility', 'visual-bugs', 'comprehensive'] as const;
export type AnalysisType = (typeof ANALYSIS_TYPES)[number];

/** axe-core's impact scale, used for every finding so one threshold reads them all. */
export const SEVERITIES = ['minor', 'moderate', 'serious', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** Document coordinates, CSS pixels (device scale factor 1, so screenshot pixels too). */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Finding {
  /** What kind: `interactive-element`, `overlap`, `viewport-overflow`, `container-overflow`, `off-screen`,
   * `small-tap-target`, `misaligned`, `axe:<rule id>`, `broken-image`, `clipped-text`, `blank-region`,
   * `baseline-diff`, ... */
  type: string;
  severity: Severity;
  message: string;
  selector?: string;
  box?: Box;
  /** What the finding rests on, in words a reader can check (sizes, colours, the axe help URL...). */
  evidence: string;
  /** The source most likely to render the element, best first (at most 3): only when the analysis
   * was given a collection of code (app/code-links.ts). */
  code?: CodeLink[];
}

/** A place in the caller's indexed code that likely renders a finding's element. */
export interface CodeLink {
  file: string;
  startLine: number;
  endLine: number;
  /** 0-1: this file's share of the evidence found for the element (exact tokens weigh most). */
  score: number;
}

export interface AnalysisResult {
  analysisType: AnalysisType;
  summary: string;
  findings: Finding[];
  /** Counts and measures of the analysis (elements seen, violations by impact, diff ratio...). */
  metrics: Record<string, number>;
  /** The checks that ran; an image-only analysis names what it could not run, and why, in `skipped`. */
  checksRun: string[];
  skipped: { check: string; reason: string }[];
}

/**
 * What `inspectPage` records of the live page. Every list is capped and every string cut (the page's
 * scripts produce it, so it is validated on the way out); JSON-serializable, so it can be stored
 * with the screenshot and analysed again later.
 */
export interface PageReport {
  version: 1;
  url: string;
  viewport: { width: number; height: number };
  /** The document's scroll size (scrollWidth × scrollHeight of the root element). */
  document: { width: number; height: number };
  interactive: InteractiveElement[];
  images: ImageFact[];
  /** Text drawn outside its box: cut off by a clipping box, or spilling visibly over its container. */
  textIssues: TextIssue[];
  /** Outermost elements reaching past the right edge of the viewport (not inside a scroll/clip box). */
  wideElements: PlacedElement[];
  /** Outermost rendered elements lying entirely outside the document, not a visually-hidden idiom. */
  offScreen: OffScreenElement[];
  /** Element children of one parent laid out in one column or one row, for alignment checks. */
  siblingGroups: SiblingGroup[];
  probes: ProbeResult[];
  axe: AxeReport;
  /** Lists that hit their cap, by name, with how many items the page had. */
  truncated: Record<string, number>;
  /** Parts of the collection that failed in the page (a page can break the DOM API for its own scripts). */
  errors: string[];
  /** What each element a finding can name says of itself, to trace it to its source (absent in
   * reports stored before they were recorded). */
  clues?: ElementClue[];
}

/** An element's own words and names, as the page had them (analysis/element-clues.ts). */
export interface ElementClue {
  selector: string;
  tag: string;
  /** Text content, whitespace collapsed, at most 120 characters. */
  text: string;
  /** data-testid (or data-test, data-cy). */
  testId: string;
  id: string;
  /** The explicit role attribute, '' when none. */
  role: string;
  ariaLabel: string;
  classes: string[];
  alt: string;
  src: string;
  name: string;
}

export interface PlacedElement {
  selector: string;
  tag: string;
  box: Box;
}

export interface InteractiveElement extends PlacedElement {
  /** Position in `PageReport.interactive`; `within` refers to these. */
  index: number;
  role: string;
  roleSource: 'explicit' | 'implicit';
  /** The accessible name, '' when there is none; at most 200 characters. */
  name: string;
  nameSource: 'aria-labelledby' | 'aria-label' | 'label' | 'alt' | 'title' | 'content' | 'placeholder' | 'value' | 'none';
  visible: boolean;
  disabled: boolean;
  /** Indexes of the interactive elements that contain this one in the DOM. */
  within: number[];
  /** A link laid out inline inside a sentence (WCAG 2.5.8's inline exception). */
  inline: boolean;
  /** A checkbox or radio the browser sizes itself (WCAG 2.5.8's user-agent control exception). */
  userAgentSized: boolean;
  /** The element's line boxes when it wraps over several lines (at most 4). */
  rects?: Box[];
}

export interface ImageFact extends PlacedElement {
  src: string;
  alt: string | null;
  complete: boolean;
  naturalWidth: number;
  naturalHeight: number;
  visible: boolean;
  /** `img.decode()` rejected: the browser has no picture for it. */
  decodeFailed: boolean;
}

export interface TextIssue extends PlacedElement {
  kind: 'clipped' | 'overflow';
  /** The beginning of the text, at most 120 characters. */
  text: string;
  /** The box the text should stay in: the clipping box, or the container it spills out of. */
  containerSelector: string;
  containerBox: Box;
  /** How far the text reaches past that box, in CSS pixels (the larger of both axes). */
  overflowPx: number;
  axis: 'x' | 'y' | 'both';
}

export interface OffScreenElement extends PlacedElement {
  /** Brought on-screen by focusing it (a skip link): the idiom, not a bug. */
  revealsOnFocus: boolean;
  text: string;
}

export interface SiblingGroup {
  parentSelector: string;
  direction: 'column' | 'row';
  /** The parent's align-items (flex and grid) or 'normal'. */
  alignItems: string;
  /** The parent's writing direction: which edge a column starts at. */
  textDirection: 'ltr' | 'rtl';
  children: PlacedElement[];
}

/** One check a test suite asks of the page. */
export interface ElementProbe {
  selector: string;
}

export interface ProbeResult {
  selector: string;
  exists: boolean;
  count: number;
  visible: boolean;
  /** innerText of the first match, at most 300 characters. */
  text: string;
  box?: Box;
  /** The selector did not parse. */
  error?: string;
}

export interface AxeReport {
  /** axe-core's version, or null when it could not run (see `error`). */
  version: string | null;
  error?: string;
  violations: AxeViolation[];
  /** Whether the color-contrast rule ran (it is forced on). */
  contrastChecked: boolean;
  /** Nodes axe could not decide for color-contrast (text over images, gradients): to review by hand. */
  contrastIncomplete: number;
}

export interface AxeViolation {
  id: string;
  impact: Severity;
  description: string;
  help: string;
  helpUrl: string;
  /** How many nodes axe found; `nodes` holds at most 20. */
  nodeCount: number;
  nodes: AxeNode[];
}

export interface AxeNode {
  target: string;
  html: string;
  failureSummary: string;
  box?: Box;
}
