import { defineEvent, type EventDefinition } from '../../events/catalog.ts';
import type { Event } from '../../events/envelope.ts';
import type { AnalysisType, Severity } from './analysis/types.ts';

export const VISION_TOPIC = 'vision.events';

export type CaptureSource = 'capture' | 'analyze' | 'test' | 'image';

export interface ScreenshotCapturedData {
  screenshotId: string;
  customerId: string;
  keyHash: string | null;
  url: string;
  finalUrl: string;
  title: string;
  width: number;
  height: number;
  fullPage: boolean;
  selector: string | null;
  viewport: { width: number; height: number };
  httpStatus: number | null;
  /** GridFS ids (hex) of what was stored at the capture: the PNG, the DOM, the page report. */
  blobs: { png: string; dom: string; report: string };
  pngBytes: number;
  blockedCount: number;
  source: CaptureSource;
}

export interface AnalysisCompletedData {
  analysisId: string;
  customerId: string;
  keyHash: string | null;
  screenshotId: string | null;
  analysisType: AnalysisType;
  findings: Record<Severity, number>;
  findingTypes: { type: string; count: number }[];
  checksRun: string[];
  durationMs: number;
}

export type CheckKind = 'visual' | 'element' | 'a11y' | 'layout';

export interface CheckResultData {
  name: string;
  kind: CheckKind;
  status: 'passed' | 'failed';
  message: string;
  diffId: string | null;
  diffRatio: number | null;
  /** The capture a visual check compared: what accepting makes the baseline. */
  screenshotId: string | null;
  /** The baseline it was compared with (null: none, the capture became it); null in runs before v2. */
  baselineId: string | null;
  /** Pixels that differ from the baseline; null when not compared (and in runs before v2). */
  diffPixels: number | null;
}

export interface VisualTestCompletedData {
  runId: string;
  customerId: string;
  keyHash: string | null;
  suite: string;
  url: string;
  screenshotId: string | null;
  passed: number;
  failed: number;
  results: CheckResultData[];
  durationMs: number;
}

export interface BaselineAcceptedData {
  customerId: string;
  suite: string;
  check: string;
  screenshotId: string;
  reason: 'first_run' | 'accepted';
}

/** A snapshot (check@viewport) of a suite's latest run, accepted or rejected by its customer. */
export interface SnapshotReviewedData {
  customerId: string;
  suite: string;
  runId: string;
  snapshot: string;
  screenshotId: string;
  decision: 'accepted' | 'rejected';
}

export type ScreenshotCaptured = Event<'glm.screenshot-captured', ScreenshotCapturedData>;
export type AnalysisCompleted = Event<'glm.analysis-completed', AnalysisCompletedData>;
export type VisualTestCompleted = Event<'glm.visual-test-completed', VisualTestCompletedData>;
export type BaselineAccepted = Event<'glm.baseline-accepted', BaselineAcceptedData>;
export type SnapshotReviewed = Event<'glm.snapshot-reviewed', SnapshotReviewedData>;

/** Every event the vision context publishes. */
export type VisionEvent = ScreenshotCaptured | AnalysisCompleted | VisualTestCompleted | BaselineAccepted | SnapshotReviewed;

export const VISION_EVENT_TYPES = [
  'glm.screenshot-captured',
  'glm.analysis-completed',
  'glm.visual-test-completed',
  'glm.baseline-accepted',
  'glm.snapshot-reviewed',
] as const satisfies readonly VisionEvent['type'][];

/** A customer's vision events stay ordered (a baseline before the runs compared with it). */
export const VISION_EVENTS: readonly EventDefinition[] = VISION_EVENT_TYPES.map((type) =>
  defineEvent<VisionEvent>({ type, topic: VISION_TOPIC, schema: `vision/${type}`, key: (d) => d.customerId }),
);
