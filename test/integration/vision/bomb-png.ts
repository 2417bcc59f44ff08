import { constants, crc32, createDeflate } from 'node:zlib';

/**
 * PNGs for the decompression-bomb tests, made here rather than kept as fixtures: a valid RGBA image
 * of width × height whose pixels are all zero compresses about a thousandfold, so 10000×10000 (400 MB
 * of pixels) is a file of a few hundred kilobytes. The rows are streamed into deflate one at a time:
 * making the bomb must not cost the memory the test checks that decoding it does not.
 */

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/** The signature and an IHDR chunk (8-bit RGBA unless told), as the header checks read them. */
export function pngHead(
  width: number,
  height: number,
  options: { bitDepth?: number; colorType?: number; interlace?: number } = {},
): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = options.bitDepth ?? 8;
  ihdr[9] = options.colorType ?? 6;
  ihdr[12] = options.interlace ?? 0;
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr)]);
}

/** A complete, valid PNG of width × height transparent black pixels. */
export async function zeroPng(width: number, height: number): Promise<Buffer> {
  const deflate = createDeflate({ level: constants.Z_BEST_COMPRESSION, memLevel: 9 });
  const parts: Buffer[] = [];
  deflate.on('data', (data: Buffer) => parts.push(data));
  const done = new Promise<void>((resolve, reject) => {
    deflate.once('end', resolve);
    deflate.once('error', reject);
  });
  const row = Buffer.alloc(1 + width * 4); // filter byte 0, then the row's pixels
  for (let y = 0; y < height; y++) {
    if (!deflate.write(row)) await new Promise((resolve) => deflate.once('drain', resolve));
  }
  deflate.end();
  await done;
  return Buffer.concat([pngHead(width, height), chunk('IDAT', Buffer.concat(parts)), chunk('IEND', Buffer.alloc(0))]);
}
