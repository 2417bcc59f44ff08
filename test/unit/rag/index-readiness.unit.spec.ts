import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { createServer } from 'node:net';
import { readiness } from '../../../services/platform/health.ts';
import { createLogger } from '../../../services/platform/logger.ts';
import { collectionIndexes } from '../../../services/rag/collection-indexes.ts';

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

describe('readiness of the rag processes covers the shared index database (unit)', () => {
  const log = createLogger('silent');

  it('adds PostgreSQL to readiness with the postgres engine, and an unreachable database makes the process unready', async () => {
    const port = await closedPort();
    const indexes = collectionIndexes(
      { dataDir: '/nonexistent', indexEngine: { kind: 'postgres', url: `postgres://svc:pw@127.0.0.1:${port}/svc`, poolSize: 1 } },
      log,
    );
    try {
      const checks = indexes.readinessChecks();
      expect(Object.keys(checks)).to.deep.equal(['postgres']);
      const report = await readiness({
        dependencies: { kafka: async () => undefined, ...checks },
        consumers: () => [],
        stopping: () => false,
      });
      expect(report.status).to.equal('unavailable');
      expect(report.checks.kafka?.ok).to.equal(true);
      expect(report.checks.postgres?.ok).to.equal(false);
      // The reason names no credential of the URL.
      expect(report.checks.postgres?.error ?? '').not.to.include('pw');
    } finally {
      await indexes.close();
    }
  });

  it("adds nothing with SQLite files, which are the process's own", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-readiness-'));
    try {
      const indexes = collectionIndexes({ dataDir: dir, indexEngine: { kind: 'sqlite' } }, log);
      expect(indexes.readinessChecks()).to.deep.equal({});
      await indexes.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
