import { expect } from 'chai';
import { DatabaseSync } from 'node:sqlite';
import { ftsMatchExpression, queryTerms, quote } from '../../../services/rag/index-store/fts-query.ts';

describe('rag index store: FTS5 query text (unit)', () => {
  let db: DatabaseSync;

  before(() => {
    db = new DatabaseSync(':memory:');
    db.exec(`CREATE VIRTUAL TABLE t USING fts5(body, tokenize = "unicode61 tokenchars '_-'")`);
    const insert = db.prepare('INSERT INTO t (rowid, body) VALUES (?, ?)');
    insert.run(1, 'retry backoff retrybackoff');
    insert.run(2, 'near and or not');
    insert.run(3, 'body column star');
    insert.run(4, 'max_pool_size max pool size');
  });

  after(() => db.close());

  const match = (query: string) => {
    const expression = ftsMatchExpression(query);
    if (expression === undefined) return [];
    return (db.prepare('SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid').all(expression) as Array<{ rowid: number }>).map(
      (r) => r.rowid,
    );
  };

  it('splits identifiers like the index does and ORs the terms', () => {
    expect(queryTerms('retryBackoff')).to.deep.equal(['retrybackoff', 'retry', 'backoff']);
    expect(ftsMatchExpression('retryBackoff')).to.equal('"retrybackoff" OR "retry" OR "backoff"');
    expect(match('where is the retryBackoff')).to.deep.equal([1]);
    expect(match('MAX_POOL_SIZE')).to.deep.equal([4]);
  });

  it('drops English function words, unless nothing else is left', () => {
    expect(queryTerms('where are retries backed off')).to.deep.equal(['retries', 'backed', 'off']);
    expect(queryTerms('where is it')).to.deep.equal(['where', 'is', 'it']);
    expect(queryTerms('get the value')).to.deep.equal(['get', 'value']);
  });

  it('never lets user text act as FTS5 syntax', () => {
    const hostile = [
      'NEAR(retry backoff)',
      'body: star',
      'retry*',
      '^retry',
      '"unbalanced',
      'a" OR "b',
      '(((',
      'retry AND NOT backoff',
      '- - --',
      '{body}: x',
      "'; DROP TABLE t; --",
      '\u0000\u0001',
    ];
    for (const text of hostile) expect(() => match(text), text).to.not.throw();
    // operators are words, matched literally
    expect(match('NEAR AND OR NOT')).to.deep.equal([2]);
    expect(match('body: star')).to.deep.equal([3]);
    expect(match('retry*')).to.deep.equal([1]);
  });

  it('has no expression for a query without terms', () => {
    expect(ftsMatchExpression('')).to.equal(undefined);
    expect(ftsMatchExpression('?! ... ()')).to.equal(undefined);
  });

  it('bounds the number of terms of a long query', () => {
    const long = Array.from({ length: 200 }, (_, i) => `word${i}`).join(' ');
    expect(queryTerms(long)).to.have.length(32);
  });

  it('doubles quotes inside a quoted term', () => {
    expect(quote('a"b')).to.equal('"a""b"');
  });
});
