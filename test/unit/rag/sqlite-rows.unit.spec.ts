import { expect } from 'chai';
import { DatabaseSync } from 'node:sqlite';
import { blob, integer, real, SqliteColumnError, text, textOrNull } from '../../../services/rag/index-store/sqlite-rows.ts';

describe('sqlite row readers (unit)', () => {
  let db: DatabaseSync;

  beforeEach(() => {
    db = new DatabaseSync(':memory:');
    db.exec(`CREATE TABLE t (name TEXT, n INTEGER, x REAL, b BLOB);
             INSERT INTO t VALUES ('ada-private', 7, 1.5, x'0102'), (NULL, 9007199254740993, NULL, NULL);`);
  });
  afterEach(() => db.close());

  it('reads each column of a real row with the type the schema gives it', () => {
    const row = db.prepare('SELECT name, n, x, b FROM t WHERE n = 7').get();
    if (row === undefined) throw new Error('no row');
    expect(text(row, 'name')).to.equal('ada-private');
    expect(textOrNull(row, 'name')).to.equal('ada-private');
    expect(integer(row, 'n')).to.equal(7);
    expect(real(row, 'x')).to.equal(1.5);
    expect(real(row, 'n')).to.equal(7);
    expect([...blob(row, 'b')]).to.deep.equal([1, 2]);
  });

  it('reads NULL only where the column may be NULL', () => {
    const row = db.prepare('SELECT name FROM t WHERE name IS NULL').get();
    if (row === undefined) throw new Error('no row');
    expect(textOrNull(row, 'name')).to.equal(null);
    expect(() => text(row, 'name')).to.throw(SqliteColumnError, 'column "name": expected text, got null');
  });

  it('refuses a column of another type, naming the column and never the value', () => {
    const row = db.prepare('SELECT name, n, b FROM t WHERE n = 7').get();
    if (row === undefined) throw new Error('no row');
    expect(() => integer(row, 'name')).to.throw(SqliteColumnError, 'column "name": expected a safe integer, got string');
    expect(() => text(row, 'n')).to.throw(SqliteColumnError, 'column "n": expected text, got number');
    expect(() => text(row, 'b')).to.throw(SqliteColumnError, 'got a blob');
    expect(() => blob(row, 'name'))
      .to.throw(SqliteColumnError)
      .that.satisfies((e: Error) => !e.message.includes('ada-private'));
    expect(() => text(row, 'missing')).to.throw(SqliteColumnError, 'column "missing": expected text, got no such column');
  });

  it('reads a bigint that fits as a number and refuses one that does not', () => {
    const statement = db.prepare('SELECT n FROM t ORDER BY n');
    statement.setReadBigInts(true);
    const [small, large] = statement.all();
    if (small === undefined || large === undefined) throw new Error('no rows');
    expect(integer(small, 'n')).to.equal(7);
    expect(() => integer(large, 'n')).to.throw(SqliteColumnError, 'column "n": expected a safe integer, got bigint');
  });
});
