/**
 * What a PNG will cost to decode, read from its header alone: a few hundred compressed bytes can
 * declare 100 megapixels, and decoding them would take seconds of CPU and gigabytes. Every decode
 * of a customer's image is preceded by this check. Pure.
 */

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Larger images are refused rather than decoded: 40 megapixels is 160 MB of RGBA. */
export const MAX_IMAGE_PIXELS = 40_000_000;

/** Samples per pixel of each PNG colour type. */
const CHANNELS: Readonly<Record<number, number>> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

export interface PngHeader {
  readonly width: number;
  readonly height: number;
  readonly bitDepth: number;
  readonly colorType: number;
  readonly interlaced: boolean;
}

export type ImageRefusal = 'NOT_A_PNG' | 'UNSUPPORTED_IMAGE' | 'IMAGE_TOO_LARGE';

/**
 * A refusal of an image: not a PNG, or more than the limits allow. `code` travels across the work
 * pool's thread boundary (TaskError), so the caller answers the same whichever thread refused.
 */
export class ImageRefused extends Error {
  readonly code: ImageRefusal;

  constructor(code: ImageRefusal, message: string) {
    super(message);
    this.name = 'ImageRefused';
    this.code = code;
  }
}

/** The IHDR chunk, which the format requires first; throws ImageRefused('NOT_A_PNG') otherwise. */
export function readPngHeader(png: Uint8Array): PngHeader {
  const bytes = Buffer.isBuffer(png) ? png : Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  if (
    bytes.length < 33 ||
    !bytes.subarray(0, 8).equals(SIGNATURE) ||
    bytes.readUInt32BE(8) !== 13 ||
    bytes.toString('latin1', 12, 16) !== 'IHDR'
  ) {
    throw new ImageRefused('NOT_A_PNG', 'not a PNG image');
  }
  const width = bytes.readUInt32BE(16);
  const height = bytes.readUInt32BE(20);
  const bitDepth = bytes[24]!;
  const colorType = bytes[25]!;
  const channels = CHANNELS[colorType];
  if (
    width === 0 ||
    height === 0 ||
    width > 0x7fffffff ||
    height > 0x7fffffff ||
    channels === undefined ||
    ![1, 2, 4, 8, 16].includes(bitDepth)
  ) {
    throw new ImageRefused('NOT_A_PNG', 'not a PNG image (its header is invalid)');
  }
  return { width, height, bitDepth, colorType, interlaced: bytes[28] === 1 };
}

/**
 * Bytes a decode to RGBA holds at its peak: the inflated scanlines, the bitmap (16-bit samples
 * first as 16 bits, then rescaled) and the 8-bit RGBA result. Worker threads' heap limits do not
 * cover Buffers, so this estimate is what keeps a decode within its budget. Exact for
 * non-interlaced images, whose inflation pngjs stops at the size the header declares.
 */
export function decodeBytes(header: PngHeader): number {
  const { width, height, bitDepth, colorType } = header;
  const inflated = (Math.ceil((width * (CHANNELS[colorType] ?? 4) * bitDepth) / 8) + 1) * height;
  const rgba = width * height * 4;
  return inflated + (bitDepth === 16 ? rgba * 2 + rgba : rgba);
}

const mb = (bytes: number): string => `${Math.round(bytes / (1024 * 1024))} MB`;

/** The header, if the image may be decoded within `maxBytes`; ImageRefused('IMAGE_TOO_LARGE') if not. */
export function checkDecodable(png: Uint8Array, maxBytes: number): PngHeader {
  const header = readPngHeader(png);
  // pngjs inflates an interlaced image without a bound; neither Chromium's screenshots nor its
  // canvas encoder write one, so refusing them costs no real image.
  if (header.interlaced) throw new ImageRefused('UNSUPPORTED_IMAGE', 'interlaced PNG images are not analysed');
  const pixels = header.width * header.height;
  if (pixels > MAX_IMAGE_PIXELS) {
    throw new ImageRefused(
      'IMAGE_TOO_LARGE',
      `the image is ${header.width}×${header.height} pixels, over the limit of ${MAX_IMAGE_PIXELS / 1_000_000} megapixels`,
    );
  }
  const needs = decodeBytes(header);
  if (needs > maxBytes) {
    throw new ImageRefused(
      'IMAGE_TOO_LARGE',
      `decoding the ${header.width}×${header.height} image needs about ${mb(needs)}, over the ${mb(maxBytes)} an analysis may use`,
    );
  }
  return header;
}
