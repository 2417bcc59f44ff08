import { expect } from 'chai';
import { chunkFile } from '../../../services/rag/chunking/chunker.ts';
import { splitLines } from '../../../services/rag/chunking/line-windows.ts';
import { expectEveryLineCovered, summary } from './helpers.ts';

const numbered = (count: number, text = 'line') => Array.from({ length: count }, (_, i) => `${text} ${i + 1}`).join('\n');

describe('line windows and the fallback (unit)', () => {
  it('windows a file without a grammar into 60-line windows sharing 10 lines', async () => {
    const chunks = await chunkFile('config/settings.yaml', numbered(150, 'key:'));
    expect(summary(chunks)).to.deep.equal(['text - 1-60', 'text - 51-110', 'text - 101-150']);
    expect(chunks[1]?.content.split('\n')[0]).to.equal('key: 51');
    expect(chunks.every((c) => c.language === 'yaml')).to.equal(true);
  });

  it('follows the window options and trims blank lines at window edges', async () => {
    const source = ['', '', numbered(9), '', ''].join('\n');
    const chunks = await chunkFile('notes.unknownext', source, { windowLines: 4, windowOverlap: 1 });
    expect(summary(chunks)).to.deep.equal(['text - 3-6', 'text - 6-9', 'text - 9-11']);
    expect(chunks[0]?.language).to.equal('text');
  });

  it('falls back to line windows when the parse is mostly errors, and not when errors are tolerated', async () => {
    const garbage = Array.from({ length: 20 }, (_, i) => `}}} ))) ]]] ${i} ::: ;;; @@@`).join('\n');
    expect(summary(await chunkFile('broken.py', garbage))).to.deep.equal(['text - 1-20']);
    const tolerated = await chunkFile('broken.py', garbage, { maxErrorShare: 1 });
    expect(tolerated.map((c) => c.kind)).to.not.include('text');
    expectEveryLineCovered(garbage, tolerated, 3000);
  });

  it('windows files over maxParseChars without parsing them', async () => {
    const source = 'export function f() {\n  return 1;\n}\n';
    expect(summary(await chunkFile('f.ts', source))).to.deep.equal(['function f 1-3']);
    expect(summary(await chunkFile('f.ts', source, { maxParseChars: 10 }))).to.deep.equal(['text - 1-3']);
  });

  it('splits a huge function into overlapping windows that keep its kind and name', async () => {
    const body = Array.from({ length: 400 }, (_, i) => `  total += step(${i}, 'a value that makes this line longer');`);
    const head = ['/** Sums many steps. */', 'export function sumSteps(): number {', '  let total = 0;'];
    const source = [...head, ...body, '  return total;', '}', ''].join('\n');
    const chunks = await chunkFile('src/steps.ts', source, { maxChars: 2000, splitOverlap: 3 });
    expect(chunks.length).to.be.greaterThan(5);
    chunks.forEach((c, i) => {
      expect(c.kind).to.equal('function');
      expect(c.symbol).to.equal('sumSteps');
      expect(c.part).to.deep.equal({ index: i + 1, count: chunks.length });
      expect(c.content.length).to.be.at.most(2000);
      expect(c.content).to.equal(
        source
          .split('\n')
          .slice(c.startLine - 1, c.endLine)
          .join('\n'),
      );
    });
    expect(chunks[0]?.content.startsWith('/** Sums many steps. */\nexport function sumSteps(): number {')).to.equal(true);
    expect(chunks[0]?.startLine).to.equal(1);
    expect(chunks[chunks.length - 1]?.endLine).to.equal(405);
    for (let i = 1; i < chunks.length; i++) expect(chunks[i]?.startLine).to.equal((chunks[i - 1]?.endLine ?? 0) - 2);
    expectEveryLineCovered(source, chunks, 2000);
  });

  it('cuts a line longer than the cap (minified code) into pieces on the same line', async () => {
    const long = `var a=${'1+'.repeat(700)}1;`;
    const chunks = await chunkFile('dist/app.min.js', `${long}\n`, { maxChars: 500 });
    expect(chunks.length).to.equal(Math.ceil(long.length / 500));
    expect(chunks.every((c) => c.startLine === 1 && c.endLine === 1 && c.content.length <= 500)).to.equal(true);
    expect(chunks.map((c) => c.content).join('')).to.equal(long);
  });

  it('splits lines on \\n and \\r\\n and gives no chunk to an empty file', async () => {
    expect(splitLines('a\r\nb\nc\n')).to.deep.equal(['a', 'b', 'c']);
    expect(await chunkFile('empty.ts', '')).to.deep.equal([]);
    expect(await chunkFile('blank.md', '\n\n  \n')).to.deep.equal([]);
    const crlf = await chunkFile('f.py', 'def f():\r\n    return 1\r\n');
    expect(crlf.map((c) => c.content)).to.deep.equal(['def f():\n    return 1']);
  });
});
