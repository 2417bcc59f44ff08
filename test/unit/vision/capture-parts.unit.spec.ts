import { expect } from 'chai';
import { deflateSync } from 'node:zlib';
import { ByteBudget } from '../../../services/vision/browser/byte-budget.ts';
import { MAX_ELEMENTS, sanitizeElements } from '../../../services/vision/browser/page-elements.ts';
import { pngSize } from '../../../services/vision/browser/png-size.ts';
import { decodePng } from '../../integration/vision/png-pixels.ts';

/** A real, minimal RGB PNG of one colour. */
function solidPng(width: number, height: number, rgb: [number, number, number]): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const b of buf) c = (crcTable[(c ^ b) & 0xff] ?? 0) ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), body.length + 4);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => rgb).flat())]);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe('Capture parts (unit)', () => {
  it('reads PNG dimensions from the header and refuses other bytes', () => {
    expect(pngSize(solidPng(7, 3, [1, 2, 3]))).to.deep.equal({ width: 7, height: 3 });
    expect(() => pngSize(Buffer.from('GIF89a........................'))).to.throw(TypeError);
  });

  it('decodes pixels (the test helper the integration tests rely on)', () => {
    const image = decodePng(solidPng(4, 2, [12, 200, 34]));
    expect([image.width, image.height]).to.deep.equal([4, 2]);
    expect(image.pixel(3, 1)).to.deep.equal([12, 200, 34, 255]);
  });

  it('counts page weight and says so once when the limit is passed', () => {
    const budget = new ByteBudget(10);
    let told = 0;
    budget.onExceeded(() => told++);
    expect(budget.add(6)).to.equal(true);
    expect(budget.add(4)).to.equal(true); // exactly the limit is allowed
    expect(budget.add(1)).to.equal(false);
    expect(budget.add(100)).to.equal(false);
    expect([budget.used, budget.exceeded, told]).to.deep.equal([111, true, 1]);
    budget.onExceeded(() => told++); // late listener hears at once
    expect(told).to.equal(2);
  });

  it('keeps only well-formed, bounded element boxes from the page', () => {
    const raw = [
      { tag: 'BUTTON', role: null, name: '  Press\n me  ', x: 1.234, y: 2, width: 30, height: 10 },
      { tag: 'A', role: 'link', name: 'x'.repeat(5000), x: Infinity, y: 'NaN', width: 1, height: 1 },
      'junk',
      null,
      { tag: '', name: 'no tag' },
      { tag: { toString: () => 'evil' }, name: 'object tag' },
    ];
    expect(sanitizeElements(raw)).to.deep.equal([
      { tag: 'button', role: null, name: 'Press me', x: 1.23, y: 2, width: 30, height: 10 },
      { tag: 'a', role: 'link', name: 'x'.repeat(200), x: 0, y: 0, width: 1, height: 1 },
    ]);
    expect(sanitizeElements({ length: 3 })).to.deep.equal([]);
    expect(sanitizeElements(Array.from({ length: MAX_ELEMENTS + 50 }, () => ({ tag: 'p' })))).to.have.length(MAX_ELEMENTS);
  });
});
