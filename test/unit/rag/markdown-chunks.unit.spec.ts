import { expect } from 'chai';
import { chunkFile } from '../../../services/rag/chunking/chunker.ts';
import { expectEveryLineCovered, fixture, summary } from './helpers.ts';

const GUIDE = fixture('guide.md');

describe('markdown chunker (unit)', () => {
  it('makes one section per heading, named by its heading path; front matter and preamble come first', async () => {
    const chunks = await chunkFile('docs/guide.md', GUIDE);
    expect(summary(chunks)).to.deep.equal([
      'section - 1-5',
      'section Install > Linux 7-16',
      'section Install > macOS 18-20',
      'section Configuration 22-25',
      'section Configuration > Advanced 27-29',
    ]);
    expect(chunks.every((c) => c.language === 'markdown')).to.equal(true);
  });

  it('joins a heading with nothing under it to its first subsection', async () => {
    const [, linux] = await chunkFile('docs/guide.md', GUIDE);
    expect(linux?.content.split('\n').slice(0, 3)).to.deep.equal(['# Install', '', '## Linux']);
  });

  it('does not take a # line inside a fenced code block for a heading', async () => {
    const chunks = await chunkFile('docs/guide.md', GUIDE);
    expect(chunks.map((c) => c.symbol)).to.not.include('Install > Linux > this is a shell comment, not a heading');
    expect(chunks[1]?.content).to.include('# this is a shell comment, not a heading\n./install.sh\n```');
  });

  it('windows a long section, every part keeping the heading path, with overlap and the size cap', async () => {
    const paragraphs = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} explains one more detail of the setup.\n`);
    const source = ['# Setup', '', '## Details', '', ...paragraphs].join('\n');
    const chunks = await chunkFile('README.md', source, { maxChars: 400, splitOverlap: 1 });
    expect(chunks.length).to.be.greaterThan(3);
    chunks.forEach((c, i) => {
      expect(c.symbol).to.equal('Setup > Details');
      expect(c.kind).to.equal('section');
      expect(c.part).to.deep.equal({ index: i + 1, count: chunks.length });
      expect(c.content.length).to.be.at.most(400);
    });
    for (let i = 1; i < chunks.length; i++) expect(chunks[i]?.startLine).to.be.at.most(chunks[i - 1]?.endLine ?? 0);
    expectEveryLineCovered(source, chunks, 400);
  });

  it('does not take a --- after a fenced block or a list item for a setext underline', async () => {
    const source = ['# Notes', '', '```', 'code', '```', '---', '', '- item', '---', 'after'].join('\n');
    expect(summary(await chunkFile('NOTES.md', source))).to.deep.equal(['section Notes 1-10']);
  });
});
