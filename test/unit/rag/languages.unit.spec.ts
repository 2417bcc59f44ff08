import { existsSync } from 'node:fs';
import { expect } from 'chai';
import { LANGUAGE_VERSION, MIN_COMPATIBLE_VERSION } from 'web-tree-sitter';
import { detectLanguage, GRAMMARS } from '../../../services/rag/chunking/languages.ts';
import { grammarPath, parserFor } from '../../../services/rag/chunking/parsers.ts';

const id = (path: string, content?: string) => detectLanguage(path, content).id;

describe('language detection and grammars (unit)', () => {
  it('detects languages from extensions, case-insensitively', () => {
    expect(id('src/a.ts')).to.equal('typescript');
    expect(id('src/a.d.ts')).to.equal('typescript');
    expect(id('ui/App.tsx')).to.equal('tsx');
    expect(id('lib/x.cjs')).to.equal('javascript');
    expect(id('app/models.py')).to.equal('python');
    expect(id('main.go')).to.equal('go');
    expect(id('src/lib.rs')).to.equal('rust');
    expect(id('A.java')).to.equal('java');
    expect(id('B.cs')).to.equal('csharp');
    expect(id('x.h')).to.equal('c');
    expect(id('x.HPP')).to.equal('cpp');
    expect(id('README.md')).to.equal('markdown');
    expect(id('data.json')).to.equal('json');
    expect(id('strange.zzz')).to.equal('text');
  });

  it('detects build files by name and extension-less scripts by shebang', () => {
    expect(id('Gemfile')).to.equal('ruby');
    expect(id('docker/Dockerfile')).to.equal('dockerfile');
    expect(id('bin/run', '#!/usr/bin/env node\nconsole.log(1)')).to.equal('javascript');
    expect(id('bin/run', '#!/usr/bin/env -S node --experimental-strip-types\n')).to.equal('javascript');
    expect(id('bin/tool', '#!/usr/bin/python3.12 -u\n')).to.equal('python');
    expect(id('bin/setup', '#!/bin/sh\nset -e\n')).to.equal('bash');
    expect(id('bin/setup', 'no shebang')).to.equal('text');
    expect(id('a.md', '#!/bin/sh\n')).to.equal('markdown');
  });

  it('maps C to the C++ grammar and markdown to its own chunker', () => {
    expect(detectLanguage('x.c')).to.deep.equal({ id: 'c', chunker: 'code', grammar: 'cpp' });
    expect(detectLanguage('x.md')).to.deep.equal({ id: 'markdown', chunker: 'markdown' });
  });

  it('loads every grammar it names with the pinned web-tree-sitter (ABI within range)', async function () {
    this.timeout(60_000);
    for (const grammar of GRAMMARS) {
      expect(existsSync(grammarPath(grammar)), grammar).to.equal(true);
      const parser = await parserFor(grammar);
      const abi = parser.language?.abiVersion ?? 0;
      expect(abi, grammar).to.be.within(MIN_COMPATIBLE_VERSION, LANGUAGE_VERSION);
      const tree = parser.parse('x');
      expect(tree, grammar).to.not.equal(null);
      tree?.delete();
    }
  });
});
