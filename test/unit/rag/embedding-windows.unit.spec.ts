import { expect } from 'chai';
import { createHash } from 'node:crypto';
import type { Embedder, EmbeddingKind } from '../../../services/rag/embedding/embedder.ts';
import { DEFAULT_RECIPE, laterWindows, WINDOW_CHARS } from '../../../services/rag/indexing/embedding-text.ts';
import { chunkAndEmbed, meanDirection } from '../../../services/rag/indexing/index-collection.ts';

/** Unit vectors from the text's hash, remembering every text it was given. */
class RecordingEmbedder implements Embedder {
  readonly dimensions = 8;
  readonly seen: string[] = [];

  async embed(texts: readonly string[], _kind: EmbeddingKind): Promise<Float32Array[]> {
    this.seen.push(...texts);
    return texts.map(vectorOf);
  }
}

function vectorOf(text: string): Float32Array {
  const bytes = createHash('sha256').update(text).digest();
  const v = Float32Array.from(bytes.subarray(0, 8), (b) => b - 127.5);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/** A function of `lines` statements, each line about 40 characters. */
function longFunction(lines: number): string {
  const body = Array.from({ length: lines }, (_, i) => `  total += compute${i}(input, options);`);
  return ['export function sum(input, options) {', '  let total = 0;', ...body, '  return total;', '}'].join('\n');
}

describe('rag indexing: long chunks embedded in windows (unit)', () => {
  it('gives no windows for a chunk the model reads whole', () => {
    expect(laterWindows('short')).to.deep.equal([]);
    expect(laterWindows(longFunction(20))).to.deep.equal([]); // about 800 characters
  });

  it('covers every line past the first window, in windows of at most WINDOW_CHARS that overlap by two lines', () => {
    const content = longFunction(100);
    const lines = content.split('\n');
    const windows = laterWindows(content);
    expect(windows.length).to.be.greaterThan(2);
    for (const w of windows) expect(w.length).to.be.at.most(WINDOW_CHARS);
    // the first window starts two lines before the first line the chunk's own text leaves out
    let firstUnread = 0;
    for (let used = 0; used + (lines[firstUnread] as string).length + 1 <= WINDOW_CHARS; firstUnread++)
      used += (lines[firstUnread] as string).length + 1;
    expect((windows[0] as string).split('\n')[0]).to.equal(lines[firstUnread - 2]);
    const covered = new Set(windows.flatMap((w) => w.split('\n')));
    for (const line of lines.slice(firstUnread)) if (line.trim().length > 1) expect(covered.has(line), line).to.equal(true);
    expect(windows.at(-1)?.endsWith('}')).to.equal(true);
  });

  it('moves on past a line longer than a window and leaves out a tail of a few characters', () => {
    const huge = 'x'.repeat(3 * WINDOW_CHARS);
    const windows = laterWindows(['a', huge, 'b', huge].join('\n'));
    expect(windows.filter((w) => w.includes(huge))).to.have.length(2);
    expect(laterWindows(`${'y'.repeat(WINDOW_CHARS + 200)}\n}`)).to.deep.equal([]);
  });

  it('gives a single line longer than a window (minified code, one-line JSON) no windows, and does not throw', () => {
    expect(laterWindows('x'.repeat(5000))).to.deep.equal([]);
    const next = 'const after = "the line after the long one, long enough to be a window of its own";';
    expect(laterWindows(`${'y'.repeat(3000)}\n${next}`)).to.deep.equal([next]);
  });

  it('averages unit vectors into a unit vector, and returns one vector as it is', () => {
    const a = Float32Array.from([1, 0, 0]);
    const b = Float32Array.from([0, 1, 0]);
    const mean = meanDirection([a, b]);
    expect(mean[0]).to.be.closeTo(Math.SQRT1_2, 1e-6);
    expect(mean[1]).to.be.closeTo(Math.SQRT1_2, 1e-6);
    expect(mean[2]).to.equal(0);
    expect(meanDirection([a])).to.equal(a);
    expect(() => meanDirection([])).to.throw(RangeError);
  });

  it('embeds a long chunk as the mean of its text and its windows, a short one as its text alone', async () => {
    const embedder = new RecordingEmbedder();
    const text = `${longFunction(60)}\n\nexport function one() {\n  return 1;\n}\n`;
    const { records } = await chunkAndEmbed('src/sum.ts', text, { embedder, batchSize: 3, recipe: DEFAULT_RECIPE });
    expect(records.map((r) => r.symbol)).to.deep.equal(['sum', 'one']);
    const [long, short] = records as [(typeof records)[0], (typeof records)[0]];
    const windows = DEFAULT_RECIPE.windows?.('src/sum.ts', long) ?? [];
    expect(windows.length).to.be.at.least(2);
    expect(windows.every((w) => w.startsWith('src sum ts | sum (function)\n'))).to.equal(true);
    const longTexts = [DEFAULT_RECIPE.text('src/sum.ts', long), ...windows];
    expect(embedder.seen).to.deep.equal([...longTexts, DEFAULT_RECIPE.text('src/sum.ts', short)]);
    expect(Array.from(long.vector)).to.deep.equal(Array.from(meanDirection(longTexts.map(vectorOf))));
    expect(Array.from(short.vector)).to.deep.equal(Array.from(vectorOf(DEFAULT_RECIPE.text('src/sum.ts', short))));
  });
});
