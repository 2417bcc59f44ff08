import { expect } from 'chai';
import { chunkTerms } from '../../../services/rag/index-store/bm25-terms.ts';
import { compacted, encodeTerms, memoryBm25Of, TermDictionary } from '../../../services/rag/index-store/snapshot-terms.ts';

const texts = ['pool checkOut wait queue', 'retry backoff jitter retry', 'socket timeout pool', 'café naïve pool'];

describe('rag snapshot terms: a snapshot’s search terms by id, for BM25 in memory (unit)', () => {
  it('builds postings whose scores follow the rows’ terms, in row order', () => {
    const dictionary = new TermDictionary();
    const rows = texts.map((content, i) =>
      encodeTerms(chunkTerms({ content, symbol: i === 0 ? 'Pool.checkOut' : undefined }, `src/f${i}.ts`), dictionary),
    );
    const { bm25, terms } = memoryBm25Of(rows, dictionary);
    expect(terms).to.equal(dictionary.size);
    // "pool" is in rows 0, 2 and 3; row 0 names it in its symbol, so it scores highest.
    expect(bm25.search(['pool'], 10).map((r) => r.row)).to.deep.equal([0, 2, 3]);
    expect(bm25.search(['cafe'], 10).map((r) => r.row)).to.deep.equal([3]);
    expect(bm25.search(['retry', 'retry'], 10).map((r) => r.row)).to.deep.equal([1]);
    expect(bm25.search(['absent'], 10)).to.deep.equal([]);
  });

  it('starts a dictionary of only the terms in use once the shared one has grown past twice that, scoring the same', () => {
    const dictionary = new TermDictionary();
    for (let i = 0; i < 5000; i++) dictionary.idOf(`gone${i}`); // terms of chunks re-indexed away
    const rows = texts.map((content, i) => encodeTerms(chunkTerms({ content }, `src/f${i}.ts`), dictionary));
    const before = memoryBm25Of(rows, dictionary);
    const after = compacted(rows, dictionary, before.terms);
    expect(after.dictionary.size).to.equal(before.terms);
    const again = memoryBm25Of(after.rows, after.dictionary);
    for (const q of [['pool'], ['retry', 'jitter'], ['cafe', 'pool', 'timeout']])
      expect(again.bm25.search(q, 10)).to.deep.equal(before.bm25.search(q, 10));
    // Under the bound, the rows and dictionary are kept as they are.
    const small = new TermDictionary();
    const kept = texts.map((content) => encodeTerms(chunkTerms({ content }, 'a.ts'), small));
    expect(compacted(kept, small, memoryBm25Of(kept, small).terms).dictionary).to.equal(small);
  });
});
