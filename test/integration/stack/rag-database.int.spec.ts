import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'chai';
import { provision } from '../../../deploy/local/stack.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

/**
 * The local stack's PostgreSQL for the shared code index (deploy/local/pgvector, from the pinned
 * PyPI wheel): it answers, and has what the index needs, pgvector with an HNSW index and pg_trgm.
 * Driven with the installation's own psql, a real client of the real server.
 */
describe('the local stack: PostgreSQL with pgvector for the code index (integration)', function () {
  this.timeout(60_000);
  let url: string;
  let psql: string;
  const schema = `t_${process.pid}_${Date.now()}`;
  const sql = (text: string): string =>
    execFileSync(psql, ['--no-psqlrc', '--quiet', '--tuples-only', '--no-align', '-v', 'ON_ERROR_STOP=1', '-d', url, '-c', text], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    url = (await useStack()).RAG_DATABASE_URL;
    psql = join(provision('pgvector'), 'bin', 'psql');
  });
  after(() => {
    if (url) sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });

  it('runs PostgreSQL 18 with pgvector 0.8 and pg_trgm', () => {
    expect(sql('SHOW server_version')).to.match(/^18\./);
    sql('CREATE EXTENSION IF NOT EXISTS vector; CREATE EXTENSION IF NOT EXISTS pg_trgm');
    expect(sql(`SELECT extversion FROM pg_extension WHERE extname = 'vector'`)).to.match(/^0\.8\./);
    expect(sql(`SELECT similarity('shippingCost', 'shipping_cost') > 0.3`)).to.equal('t');
  });

  it('answers a nearest-neighbour query from an HNSW index', () => {
    sql(`CREATE SCHEMA ${schema}`);
    sql(`CREATE TABLE ${schema}.items (id int PRIMARY KEY, embedding vector(3))`);
    sql(`INSERT INTO ${schema}.items SELECT i, ARRAY[cos(i), sin(i), i % 7]::vector FROM generate_series(1, 500) i`);
    sql(`CREATE INDEX ON ${schema}.items USING hnsw (embedding vector_cosine_ops)`);
    const plan = sql(`SET enable_seqscan = off; EXPLAIN SELECT id FROM ${schema}.items ORDER BY embedding <=> '[1,0,0]' LIMIT 3`);
    expect(plan).to.match(/Index Scan using .*hnsw|Index Scan using items_embedding_idx/);
    const nearest = sql(
      `SELECT id FROM ${schema}.items ORDER BY embedding <=> (SELECT embedding FROM ${schema}.items WHERE id = 42) LIMIT 1`,
    );
    expect(nearest).to.equal('42');
  });
});
