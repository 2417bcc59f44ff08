import { mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import { KEYED_ENDPOINTS, failed, fuzz, startTarget, table, type FuzzTarget } from '../fuzz/fuzz.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';

/** Seed and size of the short run; `npm run fuzz -- --seed=15 --runs 64` runs the same requests. */
const SEED = 15;
const RUNS = 64;

/**
 * The fuzz suite's short seeded run (the full one is `npm run fuzz`): the same generators, the same
 * counts, 64 requests per endpoint against every service started in this process.
 */
describe('fuzz suite, short seeded run: every endpoint, no 5xx, crash, unanswered request or secret (e2e)', function () {
  // 64 requests to each of over 100 endpoints: under a minute on a quiet machine, over two on a loaded one.
  this.timeout(300_000);
  let dir: string;
  let target: FuzzTarget | undefined;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const stack = await useStack();
    dir = mkdtempSync(join(resolve('.data'), `test-${process.pid}-fuzz-`));
    target = await startTarget(stack, dir, { logLevel: process.env.TEST_FUZZ_LOG_LEVEL ?? 'debug', endpointNames: KEYED_ENDPOINTS });
  });

  after(async () => {
    await target?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`sends ${RUNS} generated requests to each endpoint (seed ${SEED}) and counts 0 of each`, async () => {
    const results = await fuzz(target!, { runs: RUNS, seed: SEED, concurrency: 8 });
    // Slow answers are npm run fuzz's to count, on a machine doing nothing else: in here they would
    // be a timed assertion, failing whenever the machine is busy (a CI run beside other work).
    const bad = results.filter((r) => failed({ ...r, slow: 0 }));
    const slow = results.reduce((n, r) => n + r.slow, 0);
    if (slow > 0) process.stderr.write(`      fuzz smoke: ${slow} answer(s) over 1 s, not judged here (see npm run fuzz)\n`);
    const details = bad.map((r) => `${r.endpoint}:\n  ${r.examples.join('\n  ')}`).join('\n');
    expect(
      bad.map((r) => r.endpoint),
      `${table(results)}\n\n${details}\n\nreproduce: npm run fuzz -- --seed=${SEED} --only '<endpoint>' --show <index>`,
    ).to.deep.equal([]);
    expect(results.filter((r) => r.requests > 0)).to.have.length.greaterThan(100);
  });
});
