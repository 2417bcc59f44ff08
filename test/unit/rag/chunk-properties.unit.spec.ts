import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { CHUNK_KINDS } from '../../../services/rag/chunking/chunk.ts';
import { chunkFile } from '../../../services/rag/chunking/chunker.ts';
import { parserFor } from '../../../services/rag/chunking/parsers.ts';
import { expectEveryLineCovered, fixture } from './helpers.ts';

const FIXTURES = readdirSync(new URL('../../fixtures/rag/', import.meta.url)).sort();

/** Real code from pinned dependencies: TypeScript sources, CommonJS, declaration files. */
const REAL = [
  'node_modules/mongodb/src/collection.ts',
  'node_modules/mongodb/src/cursor/abstract_cursor.ts',
  'node_modules/mongodb/src/utils.ts',
  'node_modules/express/lib/response.js',
  'node_modules/express/lib/application.js',
  'node_modules/web-tree-sitter/web-tree-sitter.d.ts',
  'node_modules/mongodb/README.md',
];

const SIZES = [3000, 700, 200];

describe('chunk properties over fixtures and real files (unit)', function () {
  this.timeout(60_000);

  for (const name of FIXTURES) {
    it(`covers every non-blank line of fixtures/rag/${name}, within the cap, at several caps`, async () => {
      const source = fixture(name);
      for (const maxChars of SIZES) {
        const chunks = await chunkFile(name, source, { maxChars });
        expectEveryLineCovered(source, chunks, maxChars);
        for (const c of chunks) {
          expect(c.content.length, `${c.kind} ${c.symbol}`).to.be.at.most(maxChars);
          expect(c.startLine).to.be.at.least(1);
          expect(c.endLine).to.be.within(c.startLine, source.split('\n').length);
          expect(CHUNK_KINDS).to.include(c.kind);
        }
      }
    });
  }

  for (const path of REAL) {
    it(`covers every non-blank line of ${path} and gives the same chunks twice`, async () => {
      const source = readFileSync(join(process.cwd(), path), 'utf8');
      const first = await chunkFile(path, source, { maxChars: 1500 });
      expectEveryLineCovered(source, first, 1500);
      expect(first.every((c) => c.content.length <= 1500)).to.equal(true);
      const again = await chunkFile(path, source, { maxChars: 1500 });
      expect(JSON.stringify(again)).to.equal(JSON.stringify(first));
    });
  }

  it('covers stray tokens on lines of their own, between members and between declarations', async () => {
    const longer = "    return 'some longer text here';";
    const cls = ['export class Big {', '  a = 1', '  ;', '  method() {', longer, '  }', '  ;', '  other() {', longer, '  }', '}'].join(
      '\n',
    );
    const chunks = await chunkFile('big.ts', cls, { maxChars: 80 });
    expect(chunks.map((c) => c.symbol)).to.deep.equal(['Big', 'Big.method', 'Big.other']);
    expectEveryLineCovered(cls, chunks, 80);
    const ns = 'namespace n {\nclass A { int x; }\n;\nvoid f() {}\n}\n';
    expectEveryLineCovered(ns, await chunkFile('n.cpp', ns), 3000);
  });

  it('is deterministic: the same input gives the same chunks, whatever was chunked in between', async () => {
    const source = fixture('inventory.py');
    const before = await chunkFile('inventory.py', source, { maxChars: 400 });
    await chunkFile('other.py', 'def unrelated():\n    return 2\n');
    await chunkFile('inventory.py', source, { maxChars: 3000 });
    expect(await chunkFile('inventory.py', source, { maxChars: 400 })).to.deep.equal(before);
  });

  it('loads each grammar once and reuses its parser', async () => {
    const [a, b] = await Promise.all([parserFor('go'), parserFor('go')]);
    expect(a).to.equal(b);
    expect(await parserFor('go')).to.equal(a);
    expect(await parserFor('python')).to.not.equal(a);
  });

  it('refuses options that cannot work', async () => {
    let error: unknown;
    try {
      await chunkFile('a.ts', 'x', { maxChars: 10 });
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(RangeError);
  });
});
