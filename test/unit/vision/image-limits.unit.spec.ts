import { expect } from 'chai';
import { PNG } from 'pngjs';
import { HttpError } from '../../../services/platform/http/errors.ts';
import { pngFromBrowser } from '../../../services/vision/app/fetch-image.ts';
import { storageLimitBytes } from '../../../services/vision/app/storage-limit.ts';
import { decodePng, diffImages, diffPixels } from '../../../services/vision/analysis/png-checks.ts';
import {
  checkDecodable,
  decodeBytes,
  ImageRefused,
  MAX_IMAGE_PIXELS,
  readPngHeader,
} from '../../../services/vision/analysis/png-header.ts';
import { pngHead } from '../../integration/vision/bomb-png.ts';

const MB = 1024 * 1024;
const solid = (width: number, height: number): Buffer => {
  const png = new PNG({ width, height });
  png.data.fill(255);
  return PNG.sync.write(png);
};
const refusal = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
};
const dataUrl = (png: Buffer) => `data:image/png;base64,${png.toString('base64')}`;

describe('image limits (unit)', () => {
  describe('the PNG header', () => {
    it('reads size, depth, colour type and interlacing from IHDR', () => {
      expect(readPngHeader(solid(7, 3))).to.deep.equal({ width: 7, height: 3, bitDepth: 8, colorType: 6, interlaced: false });
      expect(readPngHeader(pngHead(5, 4, { bitDepth: 16, colorType: 2, interlace: 1 }))).to.deep.equal({
        width: 5,
        height: 4,
        bitDepth: 16,
        colorType: 2,
        interlaced: true,
      });
    });

    it('refuses what is not a PNG, or a header no PNG has', () => {
      for (const bytes of [
        Buffer.from('GIF89a'.padEnd(40, '.')),
        pngHead(0, 10),
        pngHead(10, 10, { colorType: 5 }),
        pngHead(10, 10, { bitDepth: 3 }),
        pngHead(10, 10).subarray(0, 30),
      ]) {
        expect(refusal(() => readPngHeader(bytes)))
          .to.be.instanceOf(ImageRefused)
          .with.property('code', 'NOT_A_PNG');
      }
    });

    it('counts what decoding would hold: inflated rows and RGBA, 16-bit samples twice over', () => {
      expect(decodeBytes({ width: 100, height: 10, bitDepth: 8, colorType: 6, interlaced: false })).to.equal(401 * 10 + 4000);
      expect(decodeBytes({ width: 100, height: 10, bitDepth: 16, colorType: 6, interlaced: false })).to.equal(801 * 10 + 3 * 4000);
      expect(decodeBytes({ width: 100, height: 10, bitDepth: 1, colorType: 0, interlaced: false })).to.equal(14 * 10 + 4000);
    });

    it('refuses 10000×10000 pixels from the header alone, at once', () => {
      const started = Date.now();
      const error = refusal(() => decodePng(Buffer.concat([pngHead(10_000, 10_000), Buffer.alloc(64)])));
      expect(error).to.be.instanceOf(ImageRefused).with.property('code', 'IMAGE_TOO_LARGE');
      expect((error as Error).message).to.match(/10000×10000.*40 megapixels/);
      expect(Date.now() - started).to.be.lessThan(100);
    });

    it('refuses an image within the pixel limit whose decoding passes the memory budget, and interlaced images', () => {
      const header = pngHead(6000, 6000, { bitDepth: 16 }); // 36 MP: 288 MB of rows, 432 MB of bitmaps
      expect(6000 * 6000).to.be.lessThan(MAX_IMAGE_PIXELS);
      expect(refusal(() => checkDecodable(header, 512 * MB)))
        .to.be.instanceOf(ImageRefused)
        .with.property('code', 'IMAGE_TOO_LARGE');
      expect(checkDecodable(pngHead(6000, 6000), 512 * MB)).to.include({ width: 6000 });
      expect(refusal(() => checkDecodable(pngHead(10, 10, { interlace: 1 }), 512 * MB)))
        .to.be.instanceOf(ImageRefused)
        .with.property('code', 'UNSUPPORTED_IMAGE');
    });
  });

  describe('what the browser hands back for an image URL', () => {
    it('refuses a 10000×10000 PNG with 413 IMAGE_TOO_LARGE before decoding it', () => {
      const error = refusal(() => pngFromBrowser({ png: dataUrl(Buffer.concat([pngHead(10_000, 10_000), Buffer.alloc(64)])) }, 512 * MB));
      expect(error).to.be.instanceOf(HttpError).and.include({ status: 413, code: 'IMAGE_TOO_LARGE' });
      expect((error as HttpError).details).to.include({ maxPixels: MAX_IMAGE_PIXELS });
    });

    it('takes a PNG within the limits, and names what else it was', () => {
      const png = solid(4, 4);
      expect(pngFromBrowser({ png: dataUrl(png) }, 512 * MB).equals(png)).to.equal(true);
      expect(refusal(() => pngFromBrowser({ problem: 'too-large', width: 9000, height: 9000 }, 512 * MB))).to.include({
        status: 413,
        code: 'IMAGE_TOO_LARGE',
      });
      expect(refusal(() => pngFromBrowser({ problem: 'not-an-image' }, 512 * MB))).to.include({ status: 422, code: 'NOT_AN_IMAGE' });
      expect(refusal(() => pngFromBrowser({ png: 'data:image/png;base64,R0lGODlhAQABAAAAACw=' }, 512 * MB))).to.include({
        status: 422,
        code: 'NOT_AN_IMAGE',
      });
      expect(refusal(() => pngFromBrowser({ png: `data:image/png;base64,${'A'.repeat(40 * MB)}` }, 512 * MB))).to.include({ status: 413 });
    });
  });

  describe('comparisons', () => {
    it('does not draw the diff of a wide image against a tall one, whose extent is far larger than either', () => {
      const wide = { width: 8000, height: 1, data: Buffer.alloc(8000 * 4, 255) };
      const tall = { width: 1, height: 8000, data: Buffer.alloc(8000 * 4, 255) };
      const started = Date.now();
      const diff = diffPixels(wide, tall);
      expect(diff.diffPng, '64 megapixels of diff image').to.equal(undefined);
      expect(diff).to.include({ sameSize: false, width: 8000, height: 8000, diffPixels: 8000 * 8000 - 1 });
      expect(Date.now() - started).to.be.lessThan(2000);
    });

    it('refuses a comparison whose images and diff would pass the budget', () => {
      const error = refusal(() => diffImages(solid(200, 200), solid(200, 200), 0.1, 500_000));
      expect(error).to.be.instanceOf(ImageRefused).with.property('code', 'IMAGE_TOO_LARGE');
      expect(diffImages(solid(200, 200), solid(200, 200)).diffPixels).to.equal(0);
    });
  });

  describe('storage bound', () => {
    const vision = { storageMb: { pro: 1024, team: 10_240 }, retentionDays: 30 };
    it("is the tier's, the smaller paid one when the face did not say, and none for operators", () => {
      expect(storageLimitBytes(vision, { customerId: 'c', keyHash: 'k', tier: 'team' })).to.equal(10_240 * MB);
      expect(storageLimitBytes(vision, { customerId: 'c', keyHash: 'k', tier: 'pro' })).to.equal(1024 * MB);
      expect(storageLimitBytes(vision, { customerId: 'c', keyHash: 'k' })).to.equal(1024 * MB);
      expect(storageLimitBytes(vision, { customerId: 'c', keyHash: 'k', tier: 'free' })).to.equal(0);
      expect(storageLimitBytes(vision, { customerId: 'operator', keyHash: null })).to.equal(null);
    });
  });
});
