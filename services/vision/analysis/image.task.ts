import { analyze } from './analyze.ts';
import { diffImages, type ImageDiff } from './png-checks.ts';
import type { AnalysisResult, AnalysisType, PageReport } from './types.ts';

/**
 * The image work of the vision operations, run on the image pool's threads (services/vision/engine.ts):
 * decoding a customer's PNG and scanning or comparing its pixels costs CPU and memory in proportion
 * to the image, so none of it runs on the event loop that serves requests. Inputs and outputs cross
 * the thread boundary by structured clone: Buffers arrive as Uint8Arrays.
 *
 * Importing this module has no effect beyond loading the analyses.
 */

export interface AnalyzeImageInput {
  type: AnalysisType;
  report?: PageReport;
  png: Uint8Array;
  baselinePng?: Uint8Array;
  /** What the decoded images may hold: the pool's memory budget (its heap limit does not cover them). */
  maxDecodeBytes: number;
}

export interface CompareImagesInput {
  baseline: Uint8Array;
  current: Uint8Array;
  threshold: number;
  maxDecodeBytes: number;
}

/** One analysis of a screenshot (the diff image of visual-bugs is not wanted by its caller). */
export async function analyzeImage(input: AnalyzeImageInput): Promise<AnalysisResult> {
  const { diffPng: _diff, ...result } = analyze(input.type, {
    ...(input.report ? { report: input.report } : {}),
    png: input.png,
    ...(input.baselinePng ? { baselinePng: input.baselinePng } : {}),
    maxDecodeBytes: input.maxDecodeBytes,
  });
  return result;
}

/** A visual check's comparison with its baseline (pixelmatch), with the diff image. */
export async function compareImages(input: CompareImagesInput): Promise<ImageDiff> {
  return diffImages(input.baseline, input.current, input.threshold, input.maxDecodeBytes);
}
