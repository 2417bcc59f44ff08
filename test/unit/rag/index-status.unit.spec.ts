import { expect } from 'chai';
import type { Db } from 'mongodb';
import { indexStatus } from '../../../services/rag/app/index-status.ts';
import { HttpError } from '../../../services/platform/http/errors.ts';

/** A database that records every collection asked for: a job id that cannot exist must not reach it. */
function watchedDb(): { db: Db; asked: () => number } {
  let asked = 0;
  const db = {
    collection: () => {
      asked++;
      throw new Error('looked up');
    },
    listCollections: () => {
      asked++;
      throw new Error('looked up');
    },
  } as unknown as Db;
  return { db, asked: () => asked };
}

describe('indexStatus: job ids that cannot exist (found by npm run fuzz)', () => {
  // FerretDB on PostgreSQL fails a find whose filter holds a NUL or a lone surrogate ("unsupported
  // Unicode escape sequence"), which answered GET /api/rag/index/%00 with a 500.
  for (const jobId of ['a\u0000b', '\ud800', '%00', '', 'x'.repeat(3000), '__proto__', '7f1c0b9e-0000-4000-8000-00000000000\u0000']) {
    it(`answers 404 for ${JSON.stringify(jobId.slice(0, 20))} without a database read`, async () => {
      const { db, asked } = watchedDb();
      const err = await indexStatus({ db }, { customerId: 'cus', keyHash: null }, jobId).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(HttpError);
      expect(err).to.deep.include({ status: 404, code: 'NOT_FOUND' });
      expect(asked()).to.equal(0);
    });
  }

  it('looks a UUID up', async () => {
    const { db, asked } = watchedDb();
    const err = await indexStatus({ db }, { customerId: 'cus', keyHash: null }, '7f1c0b9e-1d2a-4c3b-8e4f-5a6b7c8d9e0f').catch(
      (e: unknown) => e,
    );
    expect((err as Error).message).to.equal('looked up');
    expect(asked()).to.equal(1);
  });
});
