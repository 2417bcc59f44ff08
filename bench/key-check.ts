/**
 * The key check alone: CPU per call of the in-process validator (LocalValidator.check, then the
 * answer's body and headers) on the path nearly every POST /validate takes, where the key, its usage
 * and both rate-limit blocks are held in memory. bench:validate times the same work inside node:http,
 * where a run's noise (±10 points of a core from run to run) hides a change of a few microseconds;
 * this times it in a loop, against a baseline measured in the same rounds: parsing the body and hashing
 * the key, which every check must do.
 *
 *   npm run bench:key-check
 *
 * Env:
 *   MONGODB_URI    use this MongoDB (a throwaway database in it, dropped at the end); otherwise a
 *                  throwaway FerretDB is started as the local stack starts it
 *   BENCH_KEYS     team keys, each from its own client IP (default 440)
 *   BENCH_CHECKS   checks per round (default 200,000)
 *   BENCH_ROUNDS   rounds, check and baseline alternating which goes first (default 9)
 *
 * Real parts: the keys and usage documents are stored in the database by the projections' own step
 * (applyStored) and loaded through the loaders keys.service uses; the rate limits claim their blocks
 * in the database. No cache feed runs (no Kafka), so the caches keep entries for the run, as a live
 * feed keeps them trusted; a check that is not answered from memory (a block claimed as a window
 * turns) is awaited and its time counted.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { type Db, MongoClient } from 'mongodb';
import { newEvent, type DeliveredEvent } from '../events/envelope.ts';
import { ProjectionCache } from '../events/projection-cache.ts';
import { applyStored, findStoredById, findStoredByIds } from '../events/projection.ts';
import { projectionCollection } from '../events/collections.ts';
import { DEFAULT_VERIFICATION_FLUSH_MS } from '../services/platform/config.ts';
import { createLogger } from '../services/platform/logger.ts';
import { KeyCache } from '../services/keys/key-cache.ts';
import { encryptKey } from '../services/keys/key-crypto.ts';
import { generateApiKey, hashKey } from '../services/keys/key-format.ts';
import { findStoredKey, keysProjection } from '../services/keys/keys.projection.ts';
import { counted } from '../services/keys/metrics.ts';
import { QuotaReservations } from '../services/keys/quota-reservations.ts';
import { RateLimits } from '../services/keys/rate-limits.ts';
import { currentPeriod, usageDocumentId, usageProjection } from '../services/keys/usage.ts';
import { answerOf, rateHeaders, readValidateInput } from '../services/keys/validate-answer.ts';
import { LocalValidator, type ValidationOutcome } from '../services/keys/validator.ts';
import { VerificationCounts } from '../services/keys/verifications.ts';
import { intEnv } from './bench-env.ts';
import { emitFigures } from './figures.ts';
import { formatRounds, roundsOf } from './rounds.ts';
import { runMain, stopOnSignals } from './run-main.ts';
import { benchStack, type BenchStack } from './throwaway-stack.ts';

const err = (line: string) => process.stderr.write(`[bench:key-check] ${line}\n`);

const KEYS = intEnv('BENCH_KEYS', 440);
const CHECKS = intEnv('BENCH_CHECKS', 200_000);
const ROUNDS = intEnv('BENCH_ROUNDS', 9);
/** The verification counts' flush interval the keys service takes unless configured otherwise. */
const FLUSH_MS = DEFAULT_VERIFICATION_FLUSH_MS;
/** Checks per key the run may make: under the team tier's 6,000 a minute, so no check is refused. */
const PER_KEY_BUDGET = 5000;

/** A new event as the feed delivers it, at this offset of partition 0. */
const delivered = <D>(type: string, data: D, topic: string, offset: number): DeliveredEvent =>
  ({ ...newEvent(type, data), position: { topic, partition: 0, offset: String(offset) } }) as DeliveredEvent;

/** The keys' and their usage's documents, as the projections store them. */
async function seed(db: Db, apiKeys: readonly string[]): Promise<void> {
  const keys = await projectionCollection<{ _id: string }>(db, keysProjection.collection);
  const usage = await projectionCollection<{ _id: string }>(db, usageProjection.collection);
  const period = currentPeriod();
  // As the issuer seals a key for the mailer; a throwaway sealing key, since nothing here opens it.
  const sealing = randomBytes(32);
  const keyDocs: { _id: string }[] = [];
  const usageDocs: { _id: string }[] = [];
  for (const [i, apiKey] of apiKeys.entries()) {
    const keyHash = hashKey(apiKey);
    const subscriptionId = `sub-bench-${i}`;
    const generated = delivered(
      'key.generated',
      {
        keyHash,
        last4: apiKey.slice(-4),
        tier: 'team',
        customerId: `cus-bench-${i}`,
        subscriptionId,
        email: `bench-${i}@example.test`,
        encryptedKey: encryptKey(apiKey, sealing, { keyHash, subscriptionId }),
        source: 'api',
        generation: 0,
        replacesLast4: null,
        expiresAt: null,
      },
      'keys.events',
      i,
    );
    const keyDoc = applyStored(keysProjection, subscriptionId, null, generated);
    if (keyDoc) keyDocs.push({ ...keyDoc, _id: subscriptionId });
    const used = delivered('usage.incremented', { keyHash, metric: 'queries', amount: 1 + (i % 50), period }, 'usage.events', i);
    const usageDoc = applyStored(usageProjection, usageDocumentId(keyHash, period), null, used);
    if (usageDoc) usageDocs.push({ ...usageDoc, _id: usageDocumentId(keyHash, period) });
  }
  await keys.insertMany(keyDocs);
  await usage.insertMany(usageDocs);
  for (const index of keysProjection.indexes ?? []) await keys.createIndex(index.key);
}

async function main(): Promise<void> {
  let stack: BenchStack | undefined;
  let client: MongoClient | undefined;
  let dbName: string | undefined;
  let counts: VerificationCounts | undefined;
  const cleanup = async () => {
    await counts?.stop();
    if (client && dbName)
      await client
        .db(dbName)
        .dropDatabase()
        .catch(() => undefined);
    await client?.close();
    await stack?.stop();
  };
  // The timed rounds and the untimed tenth of a round; each key gets three untimed passes more.
  const checksInAll = ROUNDS * CHECKS + CHECKS / 10;
  const perKey = Math.ceil(checksInAll / KEYS) + 3;
  if (perKey > PER_KEY_BUDGET) {
    throw new Error(
      `BENCH_KEYS=${KEYS} is too few for ${ROUNDS} rounds of ${CHECKS} checks: each key would be checked ${perKey} times, ` +
        `over ${PER_KEY_BUDGET} (the team tier allows 6,000 a minute); use at least ${Math.ceil(checksInAll / (PER_KEY_BUDGET - 3))} keys`,
    );
  }
  const unhook = stopOnSignals(cleanup, err);
  try {
    stack = await benchStack({ mongo: true, kafka: false }, err);
    client = await new MongoClient(stack.env.MONGODB_URI).connect();
    dbName = `bench_key_check_${randomUUID().slice(0, 8)}`;
    const db = client.db(dbName);
    const apiKeys = Array.from({ length: KEYS }, () => generateApiKey());
    await seed(db, apiKeys);
    err(`${KEYS} team keys and their usage stored (${stack.note})`);

    // As keys.service wires them, but with no feed: entries are kept for the run (see the header).
    const held = { untrustedTtlMs: 3_600_000 };
    const keyCache = new KeyCache([], {
      ...held,
      loadById: (id) => findStoredById(db, keysProjection, id),
      loadMany: (ids) => findStoredByIds(db, keysProjection, ids),
      loadByHash: (keyHash) => findStoredKey(db, keyHash),
    });
    const usageCache = new ProjectionCache(usageProjection, [], {
      ...held,
      load: (id) => findStoredById(db, usageProjection, id),
      loadMany: (ids) => findStoredByIds(db, usageProjection, ids),
    });
    const rateLimits = new RateLimits(client, dbName);
    await rateLimits.ensureIndexes();
    counts = new VerificationCounts(db, { writer: 'bench', log: createLogger('warn') });
    counts.start(FLUSH_MS);
    const noting = counts;
    const validator = new LocalValidator(rateLimits, keyCache, usageCache, new QuotaReservations(db), {
      note: (keyHash, subscriptionId, outcome) => noting.note(keyHash, subscriptionId, outcome),
    });

    const bodies = apiKeys.map((apiKey) => JSON.stringify({ apiKey }));
    const ips = apiKeys.map((_, i) => `10.${(i >> 8) & 0xff}.${i & 0xff}.1`);
    let sink = 0;
    let awaited = 0;
    let refused = 0;

    const answer = (outcome: ValidationOutcome): void => {
      if (!outcome.result.valid) refused++;
      const { body, rate } = answerOf(counted(outcome));
      sink += body.length + rateHeaders(rate).length;
    };
    /**
     * One check as the lean handler makes it, body to answer: synchronous when answered from memory,
     * as there; a promise only when it was not.
     */
    const check = (i: number): Promise<void> | undefined => {
      const input = readValidateInput(JSON.parse(bodies[i % KEYS]!));
      if (!input.ok) throw new Error('the bench sent a body the check refuses');
      const outcome = validator.check(input.apiKey, { ip: ips[i % KEYS]! });
      if (!(outcome instanceof Promise)) {
        answer(outcome);
        return undefined;
      }
      awaited++;
      return outcome.then(answer);
    };
    const baseline = (i: number): void => {
      const body = JSON.parse(bodies[i % KEYS]!) as { apiKey: string };
      sink += hashKey(body.apiKey).length;
    };

    // Untimed: every key loaded, every block claimed, the code warm.
    for (let pass = 0; pass < 3; pass++) for (let i = 0; i < KEYS; i++) await check(i);
    for (let i = 0; i < CHECKS / 10; i++) await check(i);
    awaited = 0;
    refused = 0;

    const timeChecks = async (): Promise<number> => {
      const start = process.cpuUsage();
      for (let i = 0; i < CHECKS; i++) {
        const pending = check(i);
        if (pending) await pending;
        // Timers (the counts' flush, background claims) run as they would between requests.
        if (i % 2000 === 1999) await new Promise<void>((resolve) => setImmediate(resolve));
      }
      const used = process.cpuUsage(start);
      return (used.user + used.system) / CHECKS;
    };
    const timeBaseline = (): number => {
      const start = process.cpuUsage();
      for (let i = 0; i < CHECKS; i++) baseline(i);
      const used = process.cpuUsage(start);
      return (used.user + used.system) / CHECKS;
    };

    const checkUs: number[] = [];
    const baseUs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 0) {
        checkUs.push(await timeChecks());
        baseUs.push(timeBaseline());
      } else {
        baseUs.push(timeBaseline());
        checkUs.push(await timeChecks());
      }
      err(
        `round ${round + 1}/${ROUNDS}: check ${checkUs[round]!.toFixed(2)} µs, baseline ${baseUs[round]!.toFixed(2)} µs ` +
          `(CPU per call, ${CHECKS.toLocaleString('en')} calls)`,
      );
    }
    const checks = roundsOf(checkUs);
    const bases = roundsOf(baseUs);
    const ratios = roundsOf(checkUs.map((c, i) => c / baseUs[i]!));
    const us = (n: number) => `${n.toFixed(2)} µs`;
    console.log(
      `\nThe key check in process: ${KEYS} team keys, ${ROUNDS} rounds of ${CHECKS.toLocaleString('en')} checks; node ${process.version}`,
    );
    console.log(`check (validator, answer body and headers): ${formatRounds(checks, us)} of CPU per call`);
    console.log(`baseline (parse the body, hash the key):    ${formatRounds(bases, us)} of CPU per call`);
    console.log(`check ÷ baseline: ${formatRounds(ratios, (n) => `${n.toFixed(2)}x`)}`);
    console.log(`checks not answered from memory (awaited): ${awaited}; refused: ${refused} (sink ${sink % 10})`);
    if (refused > 0) throw new Error(`${refused} checks were refused: the bench's keys must all be valid`);
    emitFigures('key-check', [
      {
        figure: 'key check CPU per call, in process (median of rounds)',
        ours: checks.median,
        baseline: bases.median,
        baselineName: 'parse the body and hash the key',
        unit: 'µs',
        target: 'diagnostic',
        met: null,
      },
    ]);
  } finally {
    unhook();
    await cleanup();
  }
}

await runMain(main, err);
