/**
 * `npm run scale`: every service as two replicas (separate processes) on one local stack, the
 * client picking a replica per request as a load balancer would. Not part of `npm test`.
 *
 * The topology of deploy/kubernetes: accounts, keys, webhooks, billing, mailer, rag, mcp and indexer,
 * the code index in PostgreSQL with pgvector (RAG_INDEX_ENGINE=postgres), index jobs on the indexers.
 *
 *   1. rate limits across replicas: a free key admitted exactly 60 times in its minute over both
 *      keys replicas;
 *   2. the code index is shared: a collection indexed through one rag replica answers on the other
 *      at once, identically, and a change indexed through the other is seen by the first at once;
 *   3. throughput with 1 and with 2 replicas of keys (POST /validate) and rag (queries);
 *   4. sign-ups and payment webhooks under load while one replica of every service is SIGKILLed:
 *      each webhook one key and one e-mail, every sign-up answered 201 stored; a request lost with a
 *      killed replica is retried by the client on the other.
 *
 * Prints one table and exits 1 on any loss or failed check. The speed-ups of phase 3 are judged against
 * their target and written as met or MISSED; a miss fails the run where the machine has a core for each
 * replica and one for the client (SPEEDUP_CORES), and is a figure, not a failure, below that.
 * SCALE_SECONDS (8) sets each throughput measurement; SCALE_LOAD (1) scales the traffic of phase 4;
 * SCALE_SPEEDUP_TARGET (1.3) the speed-up phase 3 is judged against.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../../deploy/local/processes.ts';
import { startStack, type Stack } from '../../deploy/local/stack.ts';
import { createAppRuntime } from '../../app/runtime.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { audit, settle } from '../faults/audit.ts';
import { ServiceProcess } from '../faults/service-processes.ts';
import { pickOne, Traffic } from '../faults/traffic.ts';
import { windowWithRoom } from '../support/rate-windows.ts';
import { closedLoop } from './load.ts';
import { FaceLoad } from './face-load.ts';
import { validateLoad } from './validate-load.ts';
import { ServiceStandIn } from './service-stand-in.ts';

const VARIANT = 900_002;
const SECONDS = Number(process.env.SCALE_SECONDS ?? 8);
const LOAD = Number(process.env.SCALE_LOAD ?? 1);
/**
 * The speed-up a second replica must bring (SCALE_SPEEDUP_TARGET, default 1.3x). Not 2x: the load
 * generator, the stack and both replicas share this machine's cores; below 1.3x a second replica buys
 * too little for the HPAs' premise (more pods, more throughput) to hold.
 */
const SPEEDUP_TARGET = Number(process.env.SCALE_SPEEDUP_TARGET ?? 1.3);
/**
 * Cores below which a second replica cannot show a speed-up at all: one for each of the two replicas
 * and one for the load generator. On 2 cores one replica and the client already fill the machine (with
 * the stack and the other 14 processes beside them), so a miss there says what the machine lacks,
 * not what svc does: it is written as MISSED and the run goes on to its loss checks.
 */
const SPEEDUP_CORES = 3;
const speedUpJudged = availableParallelism() >= SPEEDUP_CORES;
const log = (line: string) => process.stderr.write(`${line}\n`);

/** A service's port variable; consumers without HTTP answer /health on OPS_PORT. */
const PORT_VARIABLE: Record<string, string> = {
  accounts: 'ACCOUNTS_PORT',
  keys: 'KEYS_PORT',
  webhooks: 'WEBHOOKS_PORT',
  billing: 'OPS_PORT',
  mailer: 'OPS_PORT',
  rag: 'RAG_PORT',
  mcp: 'MCP_PORT',
  indexer: 'OPS_PORT',
};

interface Replicas {
  readonly name: string;
  readonly processes: ServiceProcess[];
  readonly urls: string[];
}

async function main(): Promise<number> {
  for (const name of ['KAFKA_BROKERS', 'MONGODB_URI', 'SMTP_URL', 'RAG_DATABASE_URL']) {
    if (process.env[name]) {
      log(`scale: this run starts its own stack; unset ${name}`);
      return 64;
    }
  }
  const base = resolve('.data');
  mkdirSync(base, { recursive: true });
  const dataDir = mkdtempSync(join(base, 'scale-'));
  const signingSecret = randomBytes(16).toString('hex');
  const shared = randomBytes(32).toString('hex');
  let stack: Stack | undefined;
  let keysService: ServiceStandIn | undefined;
  const all: Replicas[] = [];
  /** What was checked, what came out, whether it passed; a figure (fourth) is written, never failed. */
  const rows: Array<[string, string, boolean, 'figure'?]> = [];
  const check = (what: string, value: string, ok: boolean) => {
    rows.push([what, value, ok]);
    log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}: ${value}`);
  };
  try {
    log(`scale: local stack under ${dataDir}`);
    stack = await startStack({ dataDir, ports: 'auto', ragDatabase: true, mailMaxMessages: 0, progress: (l) => log(`  ${l}`) });
    const workspace = join(dataDir, 'workspace');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...stack.env,
      NODE_ENV: 'test',
      // The stack's deploy step: schemas registered by the processes as they start.
      SCHEMA_REGISTER_AT_START: 'true',
      LOG_LEVEL: process.env.SCALE_LOG_LEVEL ?? 'warn',
      MONGODB_DB: 'scale',
      KAFKA_TOPIC_PREFIX: 'scale.',
      HTTP_HOST: '127.0.0.1',
      JWT_SECRET: randomBytes(32).toString('hex'),
      WEBHOOK_SECRET: shared,
      PAYMENT_WEBHOOK_SECRET: signingSecret,
      KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      PAYMENT_VARIANT_TIERS: `${VARIANT}:pro`,
      PAYMENT_ALLOW_TEST_MODE: 'true',
      // One client address sends everything here; per-IP limits are not what this run measures.
      SIGNUPS_PER_IP_PER_HOUR: '1000000',
      SIGNUPS_PER_MINUTE: '1000000',
      KEY_VALIDATION_PER_IP_PER_MINUTE: '1000000',
      KAFKA_SESSION_TIMEOUT_MS: '10000',
      EFFECT_LEASE_MS: '5000',
      RAG_ROOTS: workspace,
      // The deploy files' topology: the faces read one shared index and leave index jobs to the indexers.
      RAG_INDEX_ENGINE: 'postgres',
      RAG_RUN_INDEXER: 'false',
    };
    const logs = join(dataDir, 'services');
    mkdirSync(logs, { recursive: true });
    const plan: Record<string, number[]> = {};
    for (const name of Object.keys(PORT_VARIABLE)) plan[name] = [await freePort(), await freePort()];
    // The gates ask the keys Service, as a deployment's do: a stand-in spreading connections over both replicas.
    keysService = new ServiceStandIn(plan.keys!);
    env.AUTH_URL = await keysService.listen();
    for (const [name, ports] of Object.entries(plan)) {
      const processes = ports.map(
        (port, i) =>
          new ServiceProcess(
            name,
            { ...env, [PORT_VARIABLE[name]!]: String(port), RAG_DATA_DIR: join(dataDir, `rag-${name}-${i + 1}`) },
            port,
            logs,
            `${name}-${i + 1}`,
          ),
      );
      all.push({ name, processes, urls: ports.map((port) => `http://127.0.0.1:${port}`) });
    }
    log('scale: starting two replicas of every service');
    for (const replicas of all) for (const p of replicas.processes) await p.start(300_000);
    const urls = (name: string) => all.find((r) => r.name === name)!.urls;

    const mint = async (tier: 'free' | 'pro' | 'team') => {
      const customerId = `cus-${tier}-${randomUUID().slice(0, 8)}`;
      const res = await fetch(`${pickOne(urls('keys'))}/generate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${shared}` },
        body: JSON.stringify({ customerId, email: `${customerId}@example.test`, tier, subscriptionId: `sub-${randomUUID()}` }),
      });
      if (res.status !== 201) throw new Error(`minting a ${tier} key answered ${res.status}`);
      return { customerId, apiKey: ((await res.json()) as { apiKey: string }).apiKey };
    };

    // 1. Rate limits across replicas.
    log('\nphase 1: a free key, 100 requests spread over both keys replicas');
    {
      const { apiKey } = await mint('free');
      await windowWithRoom(60, 20_000);
      let admitted = 0;
      for (let i = 0; i < 100; i++) {
        const res = await fetch(`${pickOne(urls('keys'))}/validate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ apiKey }),
        });
        if (res.status === 200) admitted++;
        await res.arrayBuffer();
      }
      check('free key admitted in its minute over 2 keys replicas', `${admitted} of 100 (limit 60)`, admitted === 60);
    }

    // 2. The code index is shared between the rag replicas.
    log('\nphase 2: index through one rag replica, query on the other');
    const team = await mint('team');
    {
      const folder = join(workspace, team.customerId, 'shop');
      cpSync(resolve('test/fixtures/rag-repo'), folder, { recursive: true });
      const [rag1, rag2] = urls('rag') as [string, string];
      const post = async (url: string, path: string, body: unknown) => {
        const res = await fetch(`${url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': team.apiKey },
          body: JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      };
      const setup = await post(rag1, '/api/rag/setup', { projectPath: folder, collectionName: 'shop' });
      const indexed = await post(rag1, '/api/rag/index', { collectionName: 'shop', wait: true });
      check(
        'collection set up and indexed through rag replica 1',
        `${setup.status} / ${indexed.status}`,
        setup.status === 200 && indexed.status === 200,
      );
      const query = { query: 'where is the shipping cost computed?', collectionName: 'shop', topK: 5 };
      const on2 = await post(rag2, '/api/rag/query', query);
      const on1 = await post(rag1, '/api/rag/query', query);
      const ids = (a: { body: Record<string, unknown> }) =>
        JSON.stringify((a.body.results as { id: string; score: number }[] | undefined)?.map((r) => [r.id, r.score]));
      const results2 = (on2.body.results as unknown[] | undefined)?.length ?? 0;
      check(
        'replica 2 answers at once for what replica 1 indexed',
        `${on2.status}, ${results2} results`,
        on2.status === 200 && results2 > 0,
      );
      check('both replicas answer identically', ids(on1) === ids(on2) ? 'same ids and scores' : 'different', ids(on1) === ids(on2));
      const marker = `shippingZoneSurcharge${randomUUID().slice(0, 6)}`;
      const pushed = await post(rag2, '/api/rag/index', {
        collectionName: 'shop',
        files: [
          { path: 'src/zones.ts', content: `export function ${marker}(zone: string): number {\n  return zone === 'far' ? 12 : 0;\n}\n` },
        ],
        wait: true,
      });
      const seen = await post(rag1, '/api/rag/query', { query: marker, collectionName: 'shop', topK: 3 });
      const found = JSON.stringify(seen.body.results ?? []).includes(marker);
      check(
        'a change indexed through replica 2 is answered by replica 1 at once',
        `${pushed.status}, ${found ? 'found' : 'not found'}`,
        found,
      );
    }

    // 3. Throughput, 1 and 2 replicas.
    log(`\nphase 3: throughput with 1 and 2 replicas, ${SECONDS} s each`);
    {
      // A key set per measurement, so neither meets keys the other used up in the same minute (6,000 a minute each).
      const keySets = [
        await Promise.all(Array.from({ length: 60 }, () => mint('team'))),
        await Promise.all(Array.from({ length: 60 }, () => mint('team'))),
      ];
      let measured = 0;
      const validate = (targets: string[]) =>
        validateLoad({ urls: targets, seconds: SECONDS, connections: 32, apiKeys: keySets[measured++ % 2]!.map((k) => k.apiKey) });
      const words = ['shipping', 'cost', 'order', 'total', 'discount', 'cart', 'tax', 'price', 'customer', 'address', 'zone', 'weight'];
      const query = (targets: string[]) =>
        closedLoop(SECONDS, 10, async (i) => {
          const text = `${words[i % words.length]} ${words[(i * 7) % words.length]} ${i}`;
          const res = await fetch(`${pickOne(targets)}/api/rag/query`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': team.apiKey },
            body: JSON.stringify({ query: text, collectionName: 'shop', topK: 5 }),
          });
          await res.arrayBuffer();
          return res.status === 200;
        });
      for (const [what, run, name] of [
        ['POST /validate', validate, 'keys'],
        ['rag query (uncached)', query, 'rag'],
      ] as const) {
        const one = await run(urls(name).slice(0, 1));
        const two = await run(urls(name));
        const speedUp = two.perSecond / one.perSecond;
        const met = speedUp >= SPEEDUP_TARGET;
        const figures = `${one.perSecond.toFixed(0)} → ${two.perSecond.toFixed(0)} (${speedUp.toFixed(2)}x: target ${met ? 'met' : 'MISSED'}); p99 ${one.p99.toFixed(1)} → ${two.p99.toFixed(1)} ms; failed ${one.failed + two.failed}`;
        check(
          `${what}: every request answered, with 1 and with 2 replicas`,
          `failed ${one.failed + two.failed}`,
          one.failed === 0 && two.failed === 0,
        );
        if (speedUpJudged) check(`${what} req/s, 1 → 2 replicas (target ${SPEEDUP_TARGET}x)`, figures, met);
        else {
          rows.push([
            `${what} req/s, 1 → 2 replicas (target ${SPEEDUP_TARGET}x; a figure on ${availableParallelism()} cores)`,
            figures,
            true,
          ]);
          log(`  ${met ? 'met ' : 'MISSED'} ${what} req/s, 1 → 2 replicas: ${figures} (not a failure below ${SPEEDUP_CORES} cores)`);
        }
      }
    }

    // 4. Load while one replica of every service is killed.
    const signUps = Math.round(150 * LOAD);
    const webhooks = Math.round(300 * LOAD);
    log(`\nphase 4: ${signUps} sign-ups and ${webhooks} webhooks over both replicas; one replica of each service SIGKILLed mid-load`);
    const traffic = new Traffic({ accounts: urls('accounts'), webhooks: urls('webhooks'), signingSecret, variant: VARIANT }, 300_000);
    const load = traffic.run({ signUps, webhooks, perSecond: 15 });
    // The other faces under load too, through the kills and the restarts: validate, rag queries, MCP calls.
    let signUpsDone = false;
    const faces = new FaceLoad({ keys: urls('keys'), rag: urls('rag'), mcp: urls('mcp') }, team.apiKey, 'shop');
    const facesRunning = faces.run(() => signUpsDone);
    await new Promise((r) => setTimeout(r, 8000));
    for (const replicas of all) await replicas.processes[1]!.kill();
    log(`  killed: ${all.map((r) => `${r.name}-2`).join(', ')}`);
    // They come back while the load runs, as a Deployment's pods would: ready only once /health is 200,
    // which asks their consumer groups too, so "ready" is "rejoined".
    const back = await Promise.allSettled(all.map((replicas) => replicas.processes[1]!.start(300_000)));
    const rejoined = back.filter((b) => b.status === 'fulfilled').length;
    const why = back.flatMap((b, i) => (b.status === 'rejected' ? [`${all[i]!.name}-2: ${String(b.reason).split('\n')[0]}`] : []));
    // The whole reason (with the end of the replica's log) here: the data folder, logs included, is removed at the end.
    for (const b of back) if (b.status === 'rejected') log(`  ${String(b.reason)}`);
    check(
      'killed replicas restarted, ready and rejoined their groups during the load',
      `${rejoined} of ${all.length}${why.length > 0 ? ` (${why.join('; ')})` : ''}`,
      rejoined === all.length,
    );
    // An index job through the faces while everything was killed and restarted: the indexers take it.
    const job = await fetch(`${pickOne(urls('rag'))}/api/rag/index`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': team.apiKey },
      body: JSON.stringify({
        collectionName: 'shop',
        files: [{ path: 'src/after-kills.ts', content: 'export const afterKills = true;\n' }],
        wait: true,
      }),
    }).then(
      async (res) => ({ status: res.status, body: (await res.json()) as { status?: string } }),
      () => ({ status: 0, body: {} as { status?: string } }),
    );
    check(
      'an index job pushed after the kills completes on the indexers',
      `${job.status} ${job.body.status ?? ''}`,
      job.status === 200 && job.body.status === 'completed',
    );
    await load;
    signUpsDone = true;
    await facesRunning;
    for (const [face, f] of Object.entries(faces.figures))
      check(
        `${face} during the kills: answered, retried, given up, other final answers`,
        `${f.ok}, ${f.retried}, ${f.gaveUp}, ${f.failed}`,
        f.ok > 0 && f.gaveUp === 0 && f.failed === 0,
      );
    const spread = keysService?.connections ?? [];
    check(
      "the gates' calls spread over both keys replicas (connections per replica)",
      spread.join(' / '),
      spread.length === 2 && spread.every((n) => n > 0),
    );
    log('settling: waiting for every consumer group to read everything');
    const rt = await createAppRuntime(loadConfig({ ...env, LOG_LEVEL: 'warn' }), createLogger('warn'), { provisionTopics: false });
    try {
      await settle(rt, log);
      const mailerKills = all.find((r) => r.name === 'mailer')!.processes.flatMap((p) => p.kills);
      const { counts, resentAfterKill } = await audit(rt, stack.env.MAILPIT_URL, traffic.record, log, {
        mailerKills,
        effectLeaseMs: Number(env.EFFECT_LEASE_MS),
      });
      for (const [name, value] of Object.entries(counts)) check(name, String(value), value === 0);
      rows.push([
        "e-mails re-sent, same Message-ID, the mailer killed between SMTP's 250 and its record (a figure, not a loss)",
        String(resentAfterKill),
        true,
      ]);
    } finally {
      await rt.close();
    }
    check(
      'client requests',
      `${traffic.record.signedUp.length} sign-ups 201, ${traffic.record.subscribed.length} webhooks 200, ${traffic.record.retried} retried, ${traffic.record.gaveUp} given up` +
        (traffic.record.otherAnswers.length > 0
          ? `; other final answers: ${traffic.record.otherAnswers.map((a) => `${a.kind} ${a.status}${a.code ? ` ${a.code}` : ''}`).join(', ')}`
          : ''),
      traffic.record.gaveUp === 0 && traffic.record.signedUp.length === signUps && traffic.record.subscribed.length === webhooks,
    );

    const width = Math.max(...rows.map(([what]) => what.length));
    process.stdout.write(`\n| ${'check'.padEnd(width)} | result | |\n|${'-'.repeat(width + 2)}|---|---|\n`);
    for (const [what, value, ok, figure] of rows)
      process.stdout.write(`| ${what.padEnd(width)} | ${value} | ${figure ?? (ok ? 'ok' : '**FAIL**')} |\n`);
    const failed = rows.filter(([, , ok]) => !ok).length;
    process.stdout.write(failed === 0 ? '\nall checks passed, nothing lost\n' : `\n${failed} checks FAILED\n`);
    return failed === 0 ? 0 : 1;
  } finally {
    for (const replicas of all) for (const p of replicas.processes) await p.stop().catch(() => undefined);
    await keysService?.close().catch(() => undefined);
    await stack?.stop().catch(() => undefined);
    if (process.env.SCALE_KEEP_DATA !== '1') rmSync(dataDir, { recursive: true, force: true });
    else log(`data kept in ${dataDir}`);
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(`scale: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
