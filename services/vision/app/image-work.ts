import { HttpError } from '../../platform/http/errors.ts';
import { TaskError, task, type Task } from '../../platform/work/task.ts';
import { WorkBudgetError, WorkPool, WorkPoolClosed, WorkQueueFull } from '../../platform/work/work-pool.ts';
import { MAX_IMAGE_PIXELS } from '../analysis/png-header.ts';
import type { AnalyzeImageInput, CompareImagesInput } from '../analysis/image.task.ts';
import type { ImageDiff } from '../analysis/png-checks.ts';
import type { AnalysisResult } from '../analysis/types.ts';

/**
 * Image work of the vision operations on the image pool (one per process, services/vision/engine.ts),
 * and how its failures read over HTTP: an image over the limits is the caller's (413), one whose
 * work ran past its budget too (422: the same image costs the same again), a customer with too much
 * waiting is asked to slow down (429), a stopping service to come back (503).
 */

const TASKS = new URL('../analysis/image.task.ts', import.meta.url);
export const analyzeImageTask = task<AnalyzeImageInput, AnalysisResult>(TASKS, 'analyzeImage');
export const compareImagesTask = task<CompareImagesInput, ImageDiff>(TASKS, 'compareImages');

export interface ImageWorkConfig {
  readonly threads: number;
  readonly memoryMb: number;
  readonly timeoutMs: number;
}

/** The pool the vision engine creates (and closes): image work is memory-heavy, so few threads. */
export function createImagePool(config: ImageWorkConfig): WorkPool {
  return new WorkPool({
    name: 'images',
    threads: config.threads,
    memoryMb: config.memoryMb,
    timeoutMs: config.timeoutMs,
    queuePerTenant: 8,
    runningPerTenant: Math.max(1, config.threads - 1),
  });
}

/** What the decoded images of one task may hold: the pool's memory budget, which its heap limit does not enforce on Buffers. */
export const decodeBudget = (memoryMb: number): number => memoryMb * 1024 * 1024;

/** `error` as the HttpError the faces answer with, when it is one of the pool's or an image refusal; else unchanged. */
export function imageWorkFailure(error: unknown): unknown {
  if (error instanceof WorkBudgetError) {
    const what =
      error.budget === 'time'
        ? 'ran past its time budget'
        : error.budget === 'memory'
          ? 'needed more memory than its budget'
          : 'failed on this image';
    return new HttpError(422, 'IMAGE_WORK_OVER_BUDGET', `the image analysis ${what}; a smaller image or page would fit`, {
      details: { budget: error.budget },
    });
  }
  if (error instanceof WorkQueueFull)
    return new HttpError(429, 'TOO_MANY_REQUESTS', 'too many image analyses of this customer are waiting; retry shortly', {
      headers: { 'Retry-After': '5' },
    });
  if (error instanceof WorkPoolClosed)
    return new HttpError(503, 'UNAVAILABLE', 'the service is stopping; retry shortly', { headers: { 'Retry-After': '5' } });
  if (error instanceof TaskError && error.code === 'IMAGE_TOO_LARGE') {
    return new HttpError(413, 'IMAGE_TOO_LARGE', error.message.slice(0, 300), { details: { maxPixels: MAX_IMAGE_PIXELS } });
  }
  if (error instanceof TaskError && (error.code === 'NOT_A_PNG' || error.code === 'UNSUPPORTED_IMAGE')) {
    return new HttpError(422, error.code, error.message.slice(0, 300));
  }
  return error;
}

/** Runs one image task for a customer, its failures as HttpErrors. */
export async function runImageTask<I, O>(pool: WorkPool, work: Task<I, O>, input: I, tenant: string): Promise<O> {
  try {
    return await pool.run(work, input, { tenant });
  } catch (error) {
    throw imageWorkFailure(error);
  }
}

/** Structured clone hands a Buffer back as a plain Uint8Array: the same bytes, as a Buffer again. */
export const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
