/**
 * `npm run fuzz`: generated requests (fast-check) against every HTTP endpoint of every service,
 * all in this process on the real local stack. Counts per endpoint: 5xx answers, crashes (uncaught
 * exceptions, unhandled rejections, a face that stops answering), answers slower than 1 s, requests
 * never answered, and real secrets seen in an answer or a log line. Exits 1 unless all are 0.
 *
 *   npm run fuzz                                  # FUZZ_RUNS (default 10,000) requests per endpoint, a random seed
 *   npm run fuzz -- --runs 1000 --seed 42         # fewer, and the run of seed 42
 *   npm run fuzz -- --seed 42 --only 'POST /auth/login' --show 1234
 *                                                 # print request 1234 of that run (or a comma list), send it, print the answer
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startStack, type Stack } from '../../deploy/local/stack.ts';
import { endpoints } from './endpoints.ts';
import { KEYED_ENDPOINTS, describeRequest, failed, fuzz, requestAt, startTarget, table, type FuzzTarget } from './fuzz.ts';
import { send } from './raw-http.ts';

const log = (line: string) => process.stderr.write(`${line}\n`);

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: process.env.FUZZ_RUNS ?? '10000' },
      seed: { type: 'string' },
      concurrency: { type: 'string', default: '8' },
      only: { type: 'string', multiple: true },
      show: { type: 'string' },
      'log-level': { type: 'string', default: process.env.FUZZ_LOG_LEVEL ?? 'debug' },
    },
  });
  const runs = Number(values.runs);
  const seed = values.seed !== undefined ? Number(values.seed) : randomBytes(4).readInt32LE(0);
  const concurrency = Number(values.concurrency);
  if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(seed) || !Number.isInteger(concurrency) || concurrency < 1) {
    log('fuzz: --runs and --concurrency are positive whole numbers, --seed a 32-bit whole number');
    return 64;
  }
  const base = resolve('.data');
  mkdirSync(base, { recursive: true });
  const dataDir = mkdtempSync(join(base, 'fuzz-'));
  let stack: Stack | undefined;
  let target: FuzzTarget | undefined;
  const startedAt = Date.now();
  try {
    log(`fuzz: seed ${seed}, ${runs} requests per endpoint, ${concurrency} in flight; local stack under ${dataDir}`);
    const existing = {
      ...(process.env.KAFKA_BROKERS ? { KAFKA_BROKERS: process.env.KAFKA_BROKERS } : {}),
      ...(process.env.MONGODB_URI ? { MONGODB_URI: process.env.MONGODB_URI } : {}),
      ...(process.env.SMTP_URL ? { SMTP_URL: process.env.SMTP_URL, MAILPIT_URL: process.env.MAILPIT_URL ?? '' } : {}),
    };
    stack = await startStack({ dataDir, ports: 'auto', existing, progress: (l) => log(`  ${l}`) });
    target = await startTarget(stack.env, dataDir, { logLevel: values['log-level'], endpointNames: KEYED_ENDPOINTS });
    log(`fuzz: services up, secrets made (${target.secrets.length}); set-up took ${Math.round((Date.now() - startedAt) / 1000)} s`);

    if (values.show !== undefined) {
      const endpoint = endpoints(target.ctx).find((e) => values.only?.some((o) => e.name === o));
      if (!endpoint) {
        log('fuzz: --show needs --only with an endpoint name exactly as the table prints it');
        return 64;
      }
      target.logs.echo = (line) => process.stdout.write(`  log: ${line.trimEnd()}\n`);
      for (const index of values.show.split(',')) {
        const req = requestAt(endpoint, seed, Number(index));
        process.stdout.write(`=== request ${index} ===\n${describeRequest(req, 20_000)}\n\n--- answer ---\n`);
        const res = await send(target.ctx.ports[endpoint.service], req);
        process.stdout.write(`${res.unanswered ? '(unanswered) ' : ''}${Math.round(res.ms)} ms\n${res.text.slice(0, 20_000)}\n\n`);
      }
      return 0;
    }

    const fuzzStarted = Date.now();
    const results = await fuzz(target, { runs, seed, concurrency, ...(values.only ? { only: values.only } : {}), progress: log });
    const seconds = (Date.now() - fuzzStarted) / 1000;
    const requests = results.reduce((n, r) => n + r.requests, 0);
    process.stdout.write(
      `\nfuzz suite: seed ${seed}, ${requests} requests to ${results.filter((r) => r.requests > 0).length} endpoints in ${Math.round(seconds)} s ` +
        `(${((seconds * 1000) / Math.max(1, requests)).toFixed(1)} s per 1,000 requests, ${concurrency} in flight); ${target.logs.lines} log lines searched\n\n`,
    );
    process.stdout.write(`${table(results)}\n`);
    const bad = results.filter(failed);
    for (const r of bad) {
      process.stdout.write(`\n${r.endpoint}:\n${r.examples.map((e) => `  ${e}`).join('\n')}\n`);
    }
    if (target.logs.errorLines.length > 0) {
      process.stdout.write(
        `\n${target.logs.errorLines.length} error-level log lines (first 10):\n${target.logs.errorLines.slice(0, 10).join('\n')}\n`,
      );
    }
    if (bad.length > 0) {
      process.stdout.write(
        `\nFAIL: ${bad.length} endpoint(s) with a count above 0. Reproduce one request with\n` +
          `  npm run fuzz -- --seed=${seed} --only '<endpoint>' --show <request index>\n`,
      );
      return 1;
    }
    process.stdout.write('\nall zero\n');
    return 0;
  } finally {
    await target?.stop().catch((err: unknown) => log(`fuzz: stopping the services: ${String(err)}`));
    await stack?.stop().catch(() => undefined);
    if (process.env.FUZZ_KEEP_DATA !== '1') rmSync(dataDir, { recursive: true, force: true });
    else log(`data kept in ${dataDir}`);
    log(`fuzz: ${Math.round((Date.now() - startedAt) / 1000)} s in all`);
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(`fuzz: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
