import { expect } from 'chai';
import { HttpError } from '../../../services/platform/http/errors.ts';
import { setupInput } from '../../../services/rag/input.ts';
import { checkServedHere, chosenVectorDb, servedVectorDb } from '../../../services/rag/vector-db.ts';

const refusal = (fn: () => unknown): HttpError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof HttpError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
};

describe('vector store a collection names (unit)', () => {
  it('is the index engine the deployment runs', () => {
    expect(servedVectorDb({ kind: 'sqlite' })).to.equal('local');
    expect(servedVectorDb({ kind: 'postgres', url: 'postgres://x/y', poolSize: 4 })).to.equal('pgvector');
  });

  it("defaults to the deployment's store and accepts it by name", () => {
    expect(chosenVectorDb(undefined, 'pgvector')).to.equal('pgvector');
    expect(chosenVectorDb('local', 'local')).to.equal('local');
  });

  it('refuses any other store with the one the deployment has', () => {
    for (const [asked, served] of [
      ['qdrant', 'local'],
      ['pgvector', 'local'],
      ['local', 'pgvector'],
    ] as const) {
      const err = refusal(() => chosenVectorDb(asked, served));
      expect(err.status).to.equal(400);
      expect(err.code).to.equal('VECTOR_DB_NOT_CONFIGURED');
      expect(err.details).to.deep.equal({ available: [served] });
      expect(err.message).to.include(`"${asked}"`).and.include(served);
    }
  });

  it('refuses a collection set up for a store the deployment does not serve', () => {
    expect(() => checkServedHere({ collectionName: 'shop', vectorDB: 'pgvector' }, 'pgvector')).to.not.throw();
    const err = refusal(() => checkServedHere({ collectionName: 'shop', vectorDB: 'local' }, 'pgvector'));
    expect(err.status).to.equal(409);
    expect(err.code).to.equal('VECTOR_DB_NOT_SERVED');
  });

  it('leaves vectorDB unset in the request when the caller names none, and refuses names it does not know', () => {
    expect(setupInput.parse({ projectPath: '/p', collectionName: 'c' }).vectorDB).to.equal(undefined);
    expect(setupInput.safeParse({ projectPath: '/p', collectionName: 'c', vectorDB: 'mongo' }).success).to.equal(false);
  });
});
