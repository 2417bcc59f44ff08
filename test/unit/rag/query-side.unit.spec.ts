import { expect } from 'chai';
import type { Embedder, EmbeddingKind } from '../../../services/rag/embedding/embedder.ts';
import { NameIndex, parseSymbol } from '../../../services/rag/index-store/name-index.ts';
import { QueryBatcher } from '../../../services/rag/index-store/query-batcher.ts';
import { allQueryTerms, looksLikeCode } from '../../../services/rag/index-store/query-profile.ts';

/** An embedder that records its calls and answers each text with [its length]. */
class RecordingEmbedder implements Embedder {
  readonly dimensions = 1;
  readonly calls: Array<{ texts: string[]; kind: EmbeddingKind }> = [];
  failNext = false;

  async embed(texts: readonly string[], kind: EmbeddingKind): Promise<Float32Array[]> {
    this.calls.push({ texts: [...texts], kind });
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.failNext) {
      this.failNext = false;
      throw new Error('model failed');
    }
    return texts.map((t) => Float32Array.of(t.length));
  }
}

describe('rag index store: the query side (unit)', () => {
  describe('looksLikeCode', () => {
    it('sees identifiers, not prose', () => {
      for (const q of ['where is checkOut', 'MAX_POOL_SIZE default', 'pool.clear on error', 'load_config'])
        expect(looksLikeCode(q), q).to.equal(true);
      for (const q of ['where are idle sockets closed', 'Connection pool', 'retry, then fail.', 'v2 API'])
        expect(looksLikeCode(q), q).to.equal(false);
    });
  });

  describe('NameIndex', () => {
    const symbols = [
      'ConnectionPool',
      'ConnectionPool.checkOut',
      'ConnectionPool.clear',
      'checkServer',
      'Server',
      'tagSetReducer',
      undefined,
      'Install > Linux Setup',
      'CSOTTimeoutContext.connectionCheckoutTimeout',
    ];
    const index = new NameIndex(symbols.map(parseSymbol));
    const named = (query: string, k = 5) => index.named(allQueryTerms(query), k).map((n) => symbols[n.row]);

    it('finds a chunk named whole or word by word, whatever the case', () => {
      expect(named('ConnectionPool checkOut')).to.deep.equal(['ConnectionPool.checkOut', 'ConnectionPool']);
      expect(named('connection pool check out')).to.deep.equal(['ConnectionPool.checkOut', 'ConnectionPool']);
      expect(named('where is tagSetReducer')).to.deep.equal(['tagSetReducer']);
      expect(named('linux setup')).to.deep.equal(['Install > Linux Setup']);
    });

    it('needs the chunk own (last) name, and ignores one-word names', () => {
      // `clear` is one word: ConnectionPool.clear is not named by "clear the connection pool", only the class is
      expect(named('clear the connection pool')).to.deep.equal(['ConnectionPool']);
      expect(named('which server')).to.deep.equal([]);
      expect(named('check the server proof')).to.deep.equal(['checkServer']);
    });

    it('prefers the identifier itself over its words, then the closer match', () => {
      const idx = new NameIndex(['readPreference', 'tagSetReducer', 'Collection.readPreference'].map(parseSymbol));
      const rows = idx.named(allQueryTerms('tagSetReducer read preference'), 3).map((n) => n.row);
      expect(rows).to.deep.equal([1, 0, 2]);
    });
  });

  describe('QueryBatcher', () => {
    it('sends queries that arrive while an inference runs as one batch, in order', async () => {
      const inner = new RecordingEmbedder();
      const batcher = new QueryBatcher(inner);
      const results = await Promise.all(['a', 'bb', 'ccc', 'dddd', 'eeeee'].map((q) => batcher.embed([q], 'query')));
      expect(results.map(([v]) => v?.[0])).to.deep.equal([1, 2, 3, 4, 5]);
      expect(inner.calls.map((c) => c.texts)).to.deep.equal([['a'], ['bb', 'ccc', 'dddd', 'eeeee']]);
    });

    it('caps the batch size, passes documents straight through and keeps multi-text calls together', async () => {
      const inner = new RecordingEmbedder();
      const batcher = new QueryBatcher(inner, { maxBatch: 2 });
      await Promise.all([batcher.embed(['q1'], 'query'), batcher.embed(['q2', 'q3', 'q4'], 'query'), batcher.embed(['doc'], 'document')]);
      expect(inner.calls).to.deep.equal([
        { texts: ['q1'], kind: 'query' },
        { texts: ['doc'], kind: 'document' },
        { texts: ['q2', 'q3'], kind: 'query' },
        { texts: ['q4'], kind: 'query' },
      ]);
    });

    it('rejects the queries of a failed batch and serves the next ones', async () => {
      const inner = new RecordingEmbedder();
      const batcher = new QueryBatcher(inner);
      inner.failNext = true;
      const outcomes = await Promise.allSettled([batcher.embed(['x'], 'query'), batcher.embed(['y'], 'query')]);
      expect(outcomes[0]?.status).to.equal('rejected');
      const [v] = await batcher.embed(['zz'], 'query');
      expect(v?.[0]).to.equal(2);
      expect(() => new QueryBatcher(inner, { maxBatch: 0 })).to.throw(RangeError);
    });
  });
});
