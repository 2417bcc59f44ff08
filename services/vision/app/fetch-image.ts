import { HttpError } from '../../platform/http/errors.ts';
import { ImageRefused, MAX_IMAGE_PIXELS, checkDecodable } from '../analysis/png-header.ts';
import { capture } from '../browser/capture.ts';
import { openIsolatedWorld } from '../browser/isolated-world.ts';
import type { VisionDeps } from '../engine.ts';
import { captureFailure } from './capture-errors.ts';
import { decodeBudget } from './image-work.ts';

/** The PNG the browser re-encodes an image to is kept only up to this size (a screenshot's limit). */
export const MAX_IMAGE_BYTES = 25 * 1024 * 1024;
const DATA_URL_PREFIX = 'data:image/png;base64,';
const MAX_DATA_URL_CHARS = DATA_URL_PREFIX.length + Math.ceil(MAX_IMAGE_BYTES / 3) * 4;

// Runs in an isolated world of the image's own document (Chromium wraps a bare image in one), which
// is same-origin with it, so the canvas is not tainted and gives back the exact pixels whatever the
// format was. Isolated: a document that is not an image (an SVG with a script, say) cannot replace
// document.images or the canvas to make this script answer bytes of its choosing.
const TO_PNG = `(() => {
  const images = document.images;
  if (!String(document.contentType).startsWith('image/') || images.length !== 1 || !images[0].complete || !images[0].naturalWidth) return { problem: 'not-an-image' };
  const img = images[0];
  if (img.naturalWidth * img.naturalHeight > ${MAX_IMAGE_PIXELS}) return { problem: 'too-large', width: img.naturalWidth, height: img.naturalHeight };
  const canvas = document.createElement('canvas');
  canvas.width = img.naturalWidth;
  canvas.height = img.naturalHeight;
  canvas.getContext('2d').drawImage(img, 0, 0);
  const png = canvas.toDataURL('image/png');
  if (png.length > ${MAX_DATA_URL_CHARS}) return { problem: 'too-many-bytes' };
  return { png };
})()`;

const tooLarge = (message: string): HttpError =>
  new HttpError(413, 'IMAGE_TOO_LARGE', message, { details: { maxPixels: MAX_IMAGE_PIXELS, maxBytes: MAX_IMAGE_BYTES } });

/**
 * The PNG bytes of what the browser answered, checked here, not only in the browser: the header
 * (IHDR) is read before anything is decoded, and an image past the pixel limit or the decoding
 * budget is refused with 413, so that a few hundred kilobytes declaring 100 megapixels never reach
 * a decoder. Pure.
 */
export function pngFromBrowser(answer: unknown, maxDecodeBytes: number): Buffer {
  const { problem, png, width, height } = (answer ?? {}) as { problem?: unknown; png?: unknown; width?: unknown; height?: unknown };
  if (problem === 'too-large')
    throw tooLarge(`the image is ${Number(width)}×${Number(height)} pixels, over the limit of ${MAX_IMAGE_PIXELS / 1_000_000} megapixels`);
  if (problem === 'too-many-bytes') throw tooLarge(`the image is over ${MAX_IMAGE_BYTES / (1024 * 1024)} MB as a PNG`);
  if (typeof png !== 'string' || !png.startsWith(DATA_URL_PREFIX)) {
    throw new HttpError(422, 'NOT_AN_IMAGE', 'screenshotUrl does not load as an image (give a page as url instead)');
  }
  if (png.length > MAX_DATA_URL_CHARS) throw tooLarge(`the image is over ${MAX_IMAGE_BYTES / (1024 * 1024)} MB as a PNG`);
  const bytes = Buffer.from(png.slice(DATA_URL_PREFIX.length), 'base64');
  try {
    checkDecodable(bytes, maxDecodeBytes);
  } catch (error) {
    if (error instanceof ImageRefused && error.code === 'IMAGE_TOO_LARGE') throw tooLarge(error.message);
    if (error instanceof ImageRefused)
      throw new HttpError(422, 'NOT_AN_IMAGE', `screenshotUrl did not give a usable image: ${error.message}`);
    throw error;
  }
  return bytes;
}

/**
 * An image given by URL, as PNG bytes. Loaded by the guarded browser, not fetched from here: the
 * same SSRF policy, page-weight limit and deadline as any capture, and every image format the
 * browser reads.
 */
export async function fetchImageAsPng(deps: VisionDeps, url: string, tenant: string): Promise<Buffer> {
  const { vision } = deps.config;
  let result: unknown;
  try {
    ({ inspection: result } = await capture(
      deps.pool,
      { url, tenant, timeoutMs: vision.captureTimeoutMs, maxBytes: vision.captureMaxBytes },
      async (page) => {
        const world = await openIsolatedWorld(page);
        try {
          return await world.evaluate(TO_PNG, { maxString: MAX_DATA_URL_CHARS, maxTotal: MAX_DATA_URL_CHARS + 1000 });
        } finally {
          await world.close();
        }
      },
    ));
  } catch (err) {
    throw captureFailure(err);
  }
  return pngFromBrowser(result, decodeBudget(vision.work.memoryMb));
}
