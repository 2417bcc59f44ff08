import { HttpError } from '../../platform/http/errors.ts';
import { capture } from '../browser/capture.ts';
import type { VisionDeps } from '../engine.ts';
import { captureFailure } from './capture-errors.ts';

/** Larger images are refused rather than decoded: 40 megapixels is ~160 MB of RGBA. */
const MAX_IMAGE_PIXELS = 40_000_000;

// Runs in the image's own document (Chromium wraps a bare image in one), which is same-origin with
// it, so the canvas is not tainted and gives back the exact pixels whatever the format was.
const TO_PNG = `(() => {
  const images = document.images;
  if (!String(document.contentType).startsWith('image/') || images.length !== 1 || !images[0].complete || !images[0].naturalWidth) return { problem: 'not-an-image' };
  const img = images[0];
  if (img.naturalWidth * img.naturalHeight > ${MAX_IMAGE_PIXELS}) return { problem: 'too-large' };
  const canvas = document.createElement('canvas');
  canvas.width = img.naturalWidth;
  canvas.height = img.naturalHeight;
  canvas.getContext('2d').drawImage(img, 0, 0);
  return { png: canvas.toDataURL('image/png') };
})()`;

/**
 * An image given by URL, as PNG bytes. Loaded by the guarded browser, not fetched from here: the
 * same SSRF policy, page-weight limit and deadline as any capture, and every image format the
 * browser reads.
 */
export async function fetchImageAsPng(deps: VisionDeps, url: string): Promise<Buffer> {
  const { vision } = deps.config;
  let result: unknown;
  try {
    ({ inspection: result } = await capture(deps.pool, { url, timeoutMs: vision.captureTimeoutMs, maxBytes: vision.captureMaxBytes }, (page) => page.evaluate(TO_PNG)));
  } catch (err) {
    throw captureFailure(err);
  }
  const answer = (result ?? {}) as { problem?: unknown; png?: unknown };
  if (answer.problem === 'too-large') throw new HttpError(422, 'TOO_LARGE', `the image is over ${MAX_IMAGE_PIXELS} pixels`);
  if (typeof answer.png !== 'string' || !answer.png.startsWith('data:image/png;base64,')) {
    throw new HttpError(422, 'NOT_AN_IMAGE', 'screenshotUrl does not load as an image (give a page as url instead)');
  }
  return Buffer.from(answer.png.slice('data:image/png;base64,'.length), 'base64');
}
