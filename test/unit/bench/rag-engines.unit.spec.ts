import { expect } from 'chai';
import { enginesOf } from '../../../bench/rag-eval/engines.ts';

describe('npm run bench:rag engine choice, BENCH_RAG_ENGINE (unit)', () => {
  it('measures the embedded SQLite index when unset or empty, as npm start runs it', () => {
    expect(enginesOf(undefined)).to.deep.equal(['sqlite']);
    expect(enginesOf('')).to.deep.equal(['sqlite']);
    expect(enginesOf('sqlite')).to.deep.equal(['sqlite']);
  });

  it('measures PostgreSQL alone, or both with SQLite first (the reference column)', () => {
    expect(enginesOf('postgres')).to.deep.equal(['postgres']);
    expect(enginesOf('both')).to.deep.equal(['sqlite', 'postgres']);
  });

  it('refuses any other value, naming the variable, rather than measuring something else', () => {
    expect(() => enginesOf('pg')).to.throw(/BENCH_RAG_ENGINE must be sqlite, postgres or both, got "pg"/);
    expect(() => enginesOf('SQLITE')).to.throw(/BENCH_RAG_ENGINE/);
  });
});
