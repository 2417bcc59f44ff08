import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import type { Chunk } from '../../../services/rag/chunking/chunk.ts';

export function fixture(name: string): string {
  return readFileSync(new URL(`../../fixtures/rag/${name}`, import.meta.url), 'utf8');
}

/** 1-based number of the first line containing `text` (fails the test when there is none). */
export function lineOf(source: string, text: string, from = 1): number {
  const lines = source.split('\n');
  for (let i = from - 1; i < lines.length; i++) if ((lines[i] as string).includes(text)) return i + 1;
  throw new Error(`no line contains ${JSON.stringify(text)}`);
}

export function only(chunks: readonly Chunk[], symbol: string): Chunk {
  const found = chunks.filter((c) => c.symbol === symbol);
  expect(found, `chunks named ${symbol}: ${chunks.map((c) => c.symbol).join(', ')}`).to.have.length(1);
  return found[0] as Chunk;
}

/**
 * Every non-blank line is in a chunk whose line range holds it and whose text contains it (a piece of
 * it, for lines cut because they are longer than the cap).
 */
export function expectEveryLineCovered(source: string, chunks: readonly Chunk[], maxChars: number): void {
  const lines = source.split('\n').map((l) => l.replace(/\r$/, ''));
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    const n = i + 1;
    const probe = line.length > maxChars ? line.slice(0, maxChars) : line.trim();
    const holder = chunks.find((c) => c.startLine <= n && n <= c.endLine && c.content.includes(probe));
    expect(holder, `line ${n} ${JSON.stringify(line)} is in no chunk`).to.not.equal(undefined);
  });
}

export function summary(chunks: readonly Chunk[]): string[] {
  return chunks.map((c) => `${c.kind} ${c.symbol ?? '-'} ${c.startLine}-${c.endLine}${c.part ? ` ${c.part.index}/${c.part.count}` : ''}`);
}
