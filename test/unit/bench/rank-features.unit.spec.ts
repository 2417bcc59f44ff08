import { expect } from 'chai';
import { candidatesOf, FEATURES, linearScore, RRF_WEIGHTS, weightVector } from '../../../bench/rag-eval/rank-features.ts';
import type { CandidateLists } from '../../../bench/rag-eval/rank-features.ts';
import { reciprocalRankFusion } from '../../../services/rag/index-store/fusion.ts';
import type { RankedChunk } from '../../../services/rag/index-store/types.ts';

const chunk = (rowId: number, path: string, score: number): RankedChunk => ({ rowId, path, ordinal: rowId, score });
const column = (name: (typeof FEATURES)[number]) => FEATURES.indexOf(name);

const lists = (codeQuery: boolean): CandidateLists => ({
  query: 'where is the pool cleared',
  codeQuery,
  bm25: [chunk(1, 'src/pool.ts', 9), chunk(2, 'src/cmap/errors.ts', 6), chunk(3, 'README.md', 3)],
  vector: [chunk(4, 'src/pool.ts', 0.6), chunk(2, 'src/cmap/errors.ts', 0.5), chunk(5, 'src/sdam/topology.ts', 0.4)],
  named: [chunk(5, 'src/sdam/topology.ts', 2)],
});

describe('bench/rag-eval learned weights: candidate features (unit)', () => {
  for (const codeQuery of [true, false]) {
    it(`with the shipped weights, scores 60 times the fusion's score (${codeQuery ? 'code' : 'plain-text'} query)`, () => {
      const l = lists(codeQuery);
      const fused = reciprocalRankFusion([
        { items: l.bm25.map((r) => r.rowId), weight: codeQuery ? 1 : 0.4 },
        { items: l.vector.map((r) => r.rowId), weight: 1 },
        { items: l.named.map((r) => r.rowId), weight: 1 },
      ]);
      const w = weightVector(RRF_WEIGHTS);
      const scores = new Map(candidatesOf(l).map((c) => [c.rowId, linearScore(c.features, w)]));
      expect([...scores.keys()].sort()).to.deep.equal(fused.map((f) => f.item).sort());
      for (const f of fused) expect(scores.get(f.item)).to.be.closeTo(60 * f.score, 1e-9);
    });
  }

  it('lists each chunk once, first seen in BM25, then the vectors, then the named list', () => {
    expect(candidatesOf(lists(false)).map((c) => [c.rowId, c.order])).to.deep.equal([
      [1, 0],
      [2, 1],
      [3, 2],
      [4, 3],
      [5, 4],
    ]);
  });

  it('measures cosine from the best one, the last listed cosine standing in for an unlisted chunk', () => {
    const byId = new Map(candidatesOf(lists(false)).map((c) => [c.rowId, c.features]));
    expect(byId.get(4)?.[column('cosineGap')]).to.equal(0);
    expect(byId.get(2)?.[column('cosineGap')]).to.be.closeTo(-0.1, 1e-12);
    expect(byId.get(1)?.[column('cosineGap')]).to.be.closeTo(-0.2, 1e-12);
    expect(byId.get(3)?.[column('bm25Relative')]).to.be.closeTo(3 / 9, 1e-12);
    expect(byId.get(4)?.[column('bm25Relative')]).to.equal(0);
  });

  it('gives every chunk of a file the file’s best rank in each list and its share of the vector list', () => {
    const byId = new Map(candidatesOf(lists(false)).map((c) => [c.rowId, c.features]));
    // src/pool.ts: chunk 1 is BM25's first, chunk 4 the vectors' first.
    for (const id of [1, 4]) {
      expect(byId.get(id)?.[column('fileBm25')]).to.be.closeTo(60 / 61, 1e-12);
      expect(byId.get(id)?.[column('fileVector')]).to.be.closeTo(60 / 61, 1e-12);
      expect(byId.get(id)?.[column('fileVectorShare')]).to.be.closeTo(1 / 3, 1e-12);
    }
    expect(byId.get(3)?.[column('fileVector')]).to.equal(0);
  });

  it('counts the share of the question’s words of three letters or more that the path holds', () => {
    const byId = new Map(candidatesOf(lists(false)).map((c) => [c.rowId, c.features]));
    // "where", "the", "pool", "cleared": all four long enough, and only "pool" is in src/pool.ts.
    expect(byId.get(1)?.[column('pathTerms')]).to.be.closeTo(1 / 4, 1e-12);
    expect(byId.get(5)?.[column('pathTerms')]).to.equal(0);
  });
});
