import pixelmatch from 'pixelmatch';
import { PNG } from 'pngjs';
import { checkDecodable, ImageRefused, MAX_IMAGE_PIXELS, type PngHeader } from './png-header.ts';
import type { Box } from './types.ts';

/**
 * Checks on the pixels alone (usable for an image given only as a URL): blank regions, and the
 * difference from a baseline.
 */

export interface Pixels {
  width: number;
  height: number;
  /** RGBA, 4 bytes a pixel, row after row. */
  data: Buffer;
}

/**
 * What one decode may hold by default. The image pool passes its own budget; this bounds callers
 * that have none (tests, benches) the same way.
 */
export const DEFAULT_DECODE_BYTES = 512 * 1024 * 1024;

const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** RGBA pixels of a PNG, refused (ImageRefused) before any decoding when its header promises more than `maxBytes`. */
export function decodePng(png: Uint8Array, maxBytes = DEFAULT_DECODE_BYTES): Pixels {
  checkDecodable(png, maxBytes);
  const image = PNG.sync.read(asBuffer(png));
  return { width: image.width, height: image.height, data: image.data };
}

/**
 * Bytes a comparison of two decoded images holds besides them: the result of pixelmatch over the
 * common area and, when the sizes differ, the diff image of the larger extent, and its encoding.
 */
export function diffBytes(a: { width: number; height: number }, b: { width: number; height: number }): number {
  const common = Math.min(a.width, b.width) * Math.min(a.height, b.height) * 4;
  const sameSize = a.width === b.width && a.height === b.height;
  const extent = Math.max(a.width, b.width) * Math.max(a.height, b.height);
  const drawn = sameSize || extent <= MAX_IMAGE_PIXELS ? extent * 4 : 0;
  // Cropped copies of both (sizes differ), pixelmatch's output, the diff image, its filtered rows.
  return (sameSize ? 0 : 2 * common) + common + (sameSize ? 0 : drawn) + drawn;
}

/** Both headers, if decoding both images and comparing them fits in `maxBytes`; ImageRefused if not. */
export function checkComparable(a: Uint8Array, b: Uint8Array, maxBytes: number): [PngHeader, PngHeader] {
  const first = checkDecodable(a, maxBytes);
  const second = checkDecodable(b, maxBytes);
  const rgba = (h: PngHeader) => h.width * h.height * 4;
  const needs = rgba(first) + rgba(second) + diffBytes(first, second);
  if (needs > maxBytes) {
    throw new ImageRefused(
      'IMAGE_TOO_LARGE',
      `comparing a ${first.width}×${first.height} image with a ${second.width}×${second.height} one needs about ${Math.round(needs / 1048576)} MB, over the ${Math.round(maxBytes / 1048576)} MB an analysis may use`,
    );
  }
  return [first, second];
}

/** Channels within this distance are one colour: flat fills, not anti-aliasing or dithering. */
const TOLERANCE = 8;
/** Share of a row's pixels that may differ from its colour and still count as flat (thin borders). */
const ROW_OUTLIERS = 0.005;
export const BLANK_BAND_MIN_PX = 150;
export const BLANK_BAND_MIN_SHARE = 0.2;

type Rgba = [number, number, number, number];

const at = (img: Pixels, x: number, y: number): Rgba => {
  const i = (y * img.width + x) * 4;
  return [img.data[i]!, img.data[i + 1]!, img.data[i + 2]!, img.data[i + 3]!];
};
const close = (a: Rgba, b: Rgba): boolean => a.every((v, i) => Math.abs(v - b[i]!) <= TOLERANCE);

/** The row's colour when it is (nearly) one colour, else null. */
function rowColour(img: Pixels, y: number): Rgba | null {
  const w = img.width;
  // The row's colour is the one most of five samples agree on, so a border at either end cannot decide.
  const samples = [0, w >> 2, w >> 1, (3 * w) >> 2, w - 1].map((x) => at(img, x, y));
  const votes = samples.map((s) => samples.filter((o) => close(s, o)).length);
  const best = Math.max(...votes);
  const colour = samples[votes.indexOf(best)];
  if (best < 3 || !colour) return null;
  const allowed = Math.floor(w * ROW_OUTLIERS);
  const data = img.data;
  const [r, g, b, a] = colour;
  let outliers = 0;
  for (let i = y * w * 4, end = i + w * 4; i < end; i += 4) {
    const same =
      Math.abs(data[i]! - r) <= TOLERANCE &&
      Math.abs(data[i + 1]! - g) <= TOLERANCE &&
      Math.abs(data[i + 2]! - b) <= TOLERANCE &&
      Math.abs(data[i + 3]! - a) <= TOLERANCE;
    if (!same && ++outliers > allowed) return null;
  }
  return colour;
}

export interface FlatBand {
  top: number;
  height: number;
  colour: string;
}

export interface BlankScan {
  width: number;
  height: number;
  /** No row with content at all: the image is one colour (or flat bands only). */
  blank: boolean;
  colour: string | null;
  /** Flat bands with content both above and below, at least 150 px and 20 % of the height. */
  bands: FlatBand[];
  /** First and last rows with content, or null for a blank image. */
  content: { top: number; bottom: number } | null;
}

const hex = (c: Rgba): string =>
  `#${c
    .slice(0, 3)
    .map((v) => v.toString(16).padStart(2, '0'))
    .join('')}${c[3] === 255 ? '' : c[3].toString(16).padStart(2, '0')}`;

/**
 * Flat runs of rows. A band counts only between rows of content: the white below the content of a
 * short page (a full-page capture is at least as tall as the viewport) and the margin above it are
 * the page's edges, not holes in it.
 */
export function scanBlank(img: Pixels): BlankScan {
  const runs: { top: number; height: number; colour: Rgba }[] = [];
  let firstContent = -1;
  let lastContent = -1;
  let run: { top: number; height: number; colour: Rgba } | null = null;
  for (let y = 0; y < img.height; y++) {
    const colour = rowColour(img, y);
    if (colour === null) {
      if (firstContent < 0) firstContent = y;
      lastContent = y;
      run = null;
      continue;
    }
    if (run && close(run.colour, colour)) run.height++;
    else runs.push((run = { top: y, height: 1, colour }));
  }
  const minHeight = Math.max(BLANK_BAND_MIN_PX, img.height * BLANK_BAND_MIN_SHARE);
  const bands = runs
    .filter((r) => firstContent >= 0 && r.top > firstContent && r.top + r.height - 1 < lastContent && r.height >= minHeight)
    .map((r) => ({ top: r.top, height: r.height, colour: hex(r.colour) }));
  const only = runs.length === 1 ? runs[0] : undefined;
  return {
    width: img.width,
    height: img.height,
    blank: firstContent < 0,
    colour: firstContent < 0 && only ? hex(only.colour) : null,
    bands,
    content: firstContent < 0 ? null : { top: firstContent, bottom: lastContent },
  };
}

export interface ImageDiff {
  sameSize: boolean;
  /** Pixels that differ; when the sizes differ, every pixel outside the common area counts. */
  diffPixels: number;
  /** diffPixels over the pixels of the larger extent (0 to 1). */
  diffRatio: number;
  /**
   * Red where the images differ, over a faint copy of the first; the larger extent. Absent when
   * that extent is over MAX_IMAGE_PIXELS (a wide image against a tall one): the counts still hold.
   */
  diffPng?: Buffer;
  /** The larger extent of the two. */
  width: number;
  height: number;
  /** The smallest box around every differing pixel, or null when none differ. */
  changed: Box | null;
}

// pixelmatch's default diffColor; its faint copy of the image is grey, so pure red is only a difference.
const DIFF_RGBA = [255, 0, 0, 255] as const;

/**
 * Compare two PNGs with pixelmatch (threshold 0 to 1, smaller is stricter; 0.1 by default), refused
 * (ImageRefused) before decoding when the two and their comparison would hold more than `maxBytes`.
 */
export function diffImages(a: Uint8Array, b: Uint8Array, threshold = 0.1, maxBytes = DEFAULT_DECODE_BYTES): ImageDiff {
  if (!(threshold >= 0 && threshold <= 1)) throw new RangeError('threshold must be a number from 0 to 1');
  checkComparable(a, b, maxBytes);
  return diffPixels(decodePng(a, maxBytes), decodePng(b, maxBytes), threshold);
}

export function diffPixels(a: Pixels, b: Pixels, threshold = 0.1): ImageDiff {
  const width = Math.max(a.width, b.width);
  const height = Math.max(a.height, b.height);
  const sameSize = a.width === b.width && a.height === b.height;
  const common = { width: Math.min(a.width, b.width), height: Math.min(a.height, b.height) };
  const crop = (img: Pixels): Buffer => {
    if (img.width === common.width && img.height === common.height) return img.data;
    const out = Buffer.alloc(common.width * common.height * 4);
    for (let y = 0; y < common.height; y++) img.data.copy(out, y * common.width * 4, y * img.width * 4, (y * img.width + common.width) * 4);
    return out;
  };
  const commonOut = Buffer.alloc(common.width * common.height * 4);
  const inCommon =
    common.width > 0 && common.height > 0 ? pixelmatch(crop(a), crop(b), commonOut, common.width, common.height, { threshold }) : 0;

  // Outside the common area everything counts as changed, drawn in the diff colour. The extent of a
  // wide image and a tall one can be far larger than either: past the limit it is not drawn at all.
  let out: { width: number; height: number; data: Buffer } | undefined;
  if (sameSize) out = { width, height, data: commonOut };
  else if (width * height <= MAX_IMAGE_PIXELS) {
    out = { width, height, data: Buffer.alloc(width * height * 4) };
    for (let i = 0; i < out.data.length; i += 4) out.data.set(DIFF_RGBA, i);
    for (let y = 0; y < common.height; y++) commonOut.copy(out.data, y * width * 4, y * common.width * 4, (y + 1) * common.width * 4);
  }
  // The part outside the common area: a strip on the right, one at the bottom, or both (an L).
  let minX = sameSize ? Infinity : common.height < height ? 0 : common.width;
  let minY = sameSize ? Infinity : common.width < width ? 0 : common.height;
  let maxX = sameSize ? -1 : width - 1;
  let maxY = sameSize ? -1 : height - 1;
  for (let y = 0; y < common.height; y++) {
    for (let x = 0, i = y * common.width * 4; x < common.width; x++, i += 4) {
      if (commonOut[i] !== DIFF_RGBA[0] || commonOut[i + 1] !== DIFF_RGBA[1] || commonOut[i + 2] !== DIFF_RGBA[2]) continue;
      if (x < minX) minX = x;
      if (x > maxX) maxX = x;
      if (y < minY) minY = y;
      if (y > maxY) maxY = y;
    }
  }
  const diff = inCommon + (width * height - common.width * common.height);
  return {
    sameSize,
    diffPixels: diff,
    diffRatio: width * height === 0 ? 0 : diff / (width * height),
    // One filter and quick deflate: the diff is mostly flat grey, and pngjs's adaptive filtering costs more than it saves.
    ...(out ? { diffPng: PNG.sync.write(out as PNG, { filterType: 1, deflateLevel: 6 }) } : {}),
    width,
    height,
    changed: maxX < 0 ? null : { x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1 },
  };
}
