/**
 * `npm run rollout`: a rolling deploy v1 → v2 of the pods `npm run play` brings up, while traffic flows on
 * every face: sign-ups, payment webhooks, POST /validate, rag queries and MCP calls.
 *
 * As `kubectl apply` of a new image does with these Deployments (maxSurge 1, maxUnavailable 0): every
 * Deployment rolls at once, each one pod at a time: a v2 pod is started and waited on until ready, then
 * an old one is taken out of the endpoints (after ENDPOINT_LAG_MS, the time a cluster takes to tell its
 * proxies) and sent SIGTERM with its terminationGracePeriodSeconds (`podman pod stop -t`). The clients
 * pick among the ready endpoints per request, as a Service does, and retry as clients do: no answer, a
 * 5xx, or a 429.
 *
 * v2 is the same build plus a new version of account.registered (one optional field more), registered by
 * v2's deploy step before its first pod starts: while the pods roll, v1 consumers read what v2 producers
 * write (issue 38), and the run fails if v2 wrote no record with it. Counts, every one must be 0: requests failed (a final answer other than
 * success, or given up), events dead-lettered, anything lost (webhooks not applied, sign-ups without an
 * account, e-mails missing, projections that differ from a replay), e-mails sent twice, keys issued twice.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { createAppRuntime, eventCatalog } from '../../app/runtime.ts';
import { DEFAULT_SCHEMAS_DIR } from '../../events/catalog.ts';
import { readToEnd } from '../../events/topic-range.ts';
import type { Runtime } from '../../services/platform/runtime.ts';
import { loadConfig } from '../../services/platform/config.ts';
import { createLogger } from '../../services/platform/logger.ts';
import { audit, settle } from '../faults/audit.ts';
import { Traffic } from '../faults/traffic.ts';
import { FaceLoad } from '../scale/face-load.ts';
import { bringUp, CACHE, podIp, podman, registerSchemas, say, sleep, until, type Pod } from './cluster.ts';
import { NETWORK } from './overlay.ts';

/** How long after a pod is deleted the endpoints stop naming it (kube-proxy, the ingress controller). */
const ENDPOINT_LAG_MS = 2000;

const FACE_PORTS = { accounts: 8081, keys: 8082, webhooks: 8083, rag: 8084, mcp: 8085 } as const;
type Face = keyof typeof FACE_PORTS;

async function main(): Promise<number> {
  const cluster = await bringUp({ oneClientAddress: true });
  const { stack, played } = cluster;
  try {
    // v2: the same build with a new version of an event its sign-ups write (issue 38): v1 pods read
    // what v2 pods write while both run, and the audit's replay (this code, which lacks the version)
    // reads it too.
    const v1 = cluster.built;
    const v2 = `${v1}-v2`;
    const dir = mkdtempSync(join(CACHE, 'rollout-'));
    const release = nextVersion(NEW_VERSION_OF);
    writeFileSync(join(dir, release.file), release.text);
    writeFileSync(
      join(dir, 'Containerfile'),
      `FROM ${v1}\nLABEL svc.release=v2\nCOPY ${release.file} /app/schemas/${release.folder}/${release.file}\n`,
    );
    await podman('build', '--pull=never', '--network=none', '-t', v2, dir);
    // v2's deploy step: its schemas registered before its first pod starts.
    const v2Schemas = join(dir, 'schemas');
    cpSync(DEFAULT_SCHEMAS_DIR, v2Schemas, { recursive: true });
    writeFileSync(join(v2Schemas, release.folder, release.file), release.text);
    const registered = await registerSchemas(stack.env.SCHEMA_REGISTRY_URL, v2Schemas);
    const added = registered.find((r) => r.eventType === release.eventType && r.version === release.version);
    if (!added) throw new Error(`v2's ${release.file} was not registered`);
    say(`v2: ${release.file} registered as ${added.subject} v${added.version}, id ${added.id}`);
    rmSync(dir, { recursive: true, force: true });

    // The endpoints of each face: the ready pods, mutated in place (the clients read them per request).
    const endpoints: Record<Face, string[]> = { accounts: [], keys: [], webhooks: [], rag: [], mcp: [] };
    const known = new Map<string, Pod>(cluster.pods.map((p) => [p.name, p]));
    const leaving = new Set<string>();
    let polling = true;
    const poller = (async () => {
      while (polling) {
        await Promise.all(
          [...known.values()].map(async (pod) => {
            const ready =
              !leaving.has(pod.name) &&
              (await fetch(`http://${pod.ip}:9090/health`, { signal: AbortSignal.timeout(2000) }).then(
                (r) => r.status === 200,
                () => false,
              ));
            const face = pod.deployment as Face;
            if (!(face in FACE_PORTS)) return;
            const url = `http://${pod.ip}:${FACE_PORTS[face]}`;
            const list = endpoints[face];
            const at = list.indexOf(url);
            if (ready && at < 0) list.push(url);
            if (!ready && at >= 0) list.splice(at, 1);
          }),
        );
        await sleep(500);
      }
    })();
    await until('every face has endpoints', async () => (Object.values(endpoints).every((l) => l.length > 0) ? true : undefined), 60_000);

    // A pro key for the faces' load: the production path, a signed live webhook and its e-mail.
    const traffic = new Traffic(
      {
        accounts: endpoints.accounts,
        webhooks: endpoints.webhooks,
        signingSecret: played.secrets.PAYMENT_WEBHOOK_SECRET,
        variant: played.proVariant,
        live: true,
      },
      300_000,
    );
    const setupKey = await provisionKey(endpoints, played.secrets.PAYMENT_WEBHOOK_SECRET, played.proVariant, stack.env.MAILPIT_URL);
    let done = false;
    const clients = traffic.run({ signUps: 2000, webhooks: 2000, perSecond: 2, concurrency: 4, stop: () => done });
    const faces = new FaceLoad({ keys: endpoints.keys, rag: endpoints.rag, mcp: endpoints.mcp }, setupKey, 'rollout');
    const facesRunning = faces.run(() => done);
    await sleep(10_000);

    // Every Deployment at once, one pod at a time in each.
    const started = Date.now();
    await Promise.all(played.deployments.map((d) => rollDeployment(d.name, d.replicas)));
    say(`rollout done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    await sleep(10_000);
    done = true;
    await Promise.all([clients, facesRunning]);
    polling = false;
    await poller;

    // The counts.
    const rt = await createAppRuntime(
      loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'warn', ...stack.env, MONGODB_DB: 'svc', KAFKA_TOPIC_PREFIX: '' }),
      createLogger('warn'),
      { provisionTopics: false },
    );
    let failed = 0;
    try {
      await settle(rt, (l) => say(l));
      const { counts } = await audit(rt, stack.env.MAILPIT_URL, traffic.record, (l) => say(l));
      const written = await recordsWithSchemaId(rt, rt.catalog.topicOf(release.eventType), added.id);
      say(`${release.eventType} records written with v2's new version (id ${added.id}): ${written}`);
      const rows: [string, number][] = [
        ...Object.entries(counts),
        // Not a loss count: it shows the new version really was written while the old pods ran.
        ['v2 pods wrote no record with the new schema version', written > 0 ? 0 : 1],
        ['sign-ups and webhooks with another final answer', traffic.record.otherAnswers.length],
        ...Object.entries(faces.figures).flatMap(([face, f]): [string, number][] => [
          [`${face}: given up`, f.gaveUp],
          [`${face}: another final answer`, f.failed],
        ]),
      ];
      const tally = (xs: string[]) => {
        const counts = new Map<string, number>();
        for (const x of xs) counts.set(x, (counts.get(x) ?? 0) + 1);
        return [...counts];
      };
      if (traffic.record.otherAnswers.length > 0)
        say(
          `other final answers: ${JSON.stringify(tally(traffic.record.otherAnswers.map((a) => `${a.kind} ${a.status} ${a.code ?? ''}`)))}`,
        );
      if (traffic.record.gaveUpKinds.length > 0)
        say(`given up: ${JSON.stringify(tally(traffic.record.gaveUpKinds.map((g) => `${g.kind} after ${g.last}`)))}`);
      say(
        `traffic: ${traffic.record.signedUp.length} sign-ups 201, ${traffic.record.subscribed.length} webhooks 200, ${traffic.record.retried} retried; ` +
          Object.entries(faces.figures)
            .map(([face, f]) => `${face} ${f.ok} answered, ${f.retried} retried`)
            .join('; '),
      );
      for (const [what, n] of rows) {
        say(`  ${n === 0 ? 'ok  ' : 'FAIL'} ${what}: ${n}`);
        if (n !== 0) failed++;
      }
    } finally {
      await rt.close();
    }
    say(failed === 0 ? 'every count 0: PASSED' : `${failed} counts not 0: FAILED`);
    return failed === 0 ? 0 : 1;

    async function rollDeployment(name: string, replicas: number): Promise<void> {
      const doc = played.yaml.split('---\n').find((y) => y.includes('kind: Deployment') && y.includes(`name: ${name}\n`));
      if (!doc) throw new Error(`no Deployment ${name} in the overlay`);
      for (let i = 0; i < replicas; i++) {
        const step = `${name}-r${i}`;
        const manifest = join(cluster.work, `${step}.yaml`);
        // The same Deployment at v2 under a name of its own (kube play names pods after it), one replica.
        const yaml = doc
          .replace(`name: ${name}\n`, `name: ${step}\n`)
          .replace(/replicas: \d+/, 'replicas: 1')
          .replaceAll(/image: \S+/g, `image: ${v2}`);
        // kube play reads ConfigMaps from the file it plays: the same svc-config beside the Deployment.
        const config = played.yaml.split('---\n').find((y) => y.includes('kind: ConfigMap')) ?? '';
        writeFileSync(manifest, `${config}---\n${yaml}`);
        await podman(
          'kube',
          'play',
          '--start=false',
          '--network',
          NETWORK.name,
          '--seccomp-profile-root',
          join(cluster.work, 'seccomp', 'profiles'),
          manifest,
        );
        const podName = `${step}-pod-0`;
        const infra = await podman('pod', 'inspect', podName, '--format', '{{.InfraContainerID}}');
        const aliases = played.services.filter((s) => s.deployments.includes(name)).map((s) => s.name);
        if (aliases.length > 0) {
          await podman('network', 'disconnect', NETWORK.name, infra);
          await podman('network', 'connect', ...aliases.flatMap((a) => ['--alias', a]), NETWORK.name, infra);
        }
        await podman('pod', 'start', podName);
        const pod: Pod = { name: podName, deployment: name, ip: await podIp(podName) };
        await until(
          `${podName} ready`,
          async () =>
            (await fetch(`http://${pod.ip}:9090/health`, { signal: AbortSignal.timeout(3000) })).status === 200 ? true : undefined,
          600_000,
        );
        known.set(podName, pod);
        say(`${podName} (v2) ready`);
        // The old pod: out of the endpoints after the lag, and SIGTERM now, with its grace.
        const old = `${name}-pod-${i}`;
        const grace = terminationGrace(doc);
        setTimeout(() => leaving.add(old), ENDPOINT_LAG_MS);
        const t = Date.now();
        await podman('pod', 'stop', '-t', String(grace), old);
        leaving.add(old);
        known.delete(old);
        say(`${old} (v1) stopped in ${((Date.now() - t) / 1000).toFixed(1)} s`);
        await podman('pod', 'rm', '-f', old);
      }
    }
  } finally {
    await cluster.down();
  }
}

/** The event a v2 release changes: one every sign-up writes. */
const NEW_VERSION_OF = 'account.registered';

/**
 * The next version of an event's schema, as a release adds one: its newest file with one optional
 * field more, which its compatibility mode (FULL_TRANSITIVE) allows. `folder` is where it goes,
 * relative to the schemas folder.
 */
function nextVersion(type: string): { folder: string; file: string; text: string; eventType: string; version: number } {
  const newest = eventCatalog().versions(type).at(-1);
  if (!newest) throw new Error(`no schema version of ${type}`);
  const json = JSON.parse(readFileSync(newest.file, 'utf8')) as { fields: unknown[] };
  json.fields.push({
    name: 'release',
    type: ['null', 'string'],
    default: null,
    doc: 'Added by npm run rollout: a field the old pods do not know',
  });
  const version = newest.version + 1;
  return {
    folder: relative(DEFAULT_SCHEMAS_DIR, dirname(newest.file)),
    file: basename(newest.file).replace(/\.v\d+\.avsc$/, `.v${version}.avsc`),
    text: `${JSON.stringify(json, null, 2)}\n`,
    eventType: type,
    version,
  };
}

/** Records of a topic whose value names this schema id (the registry wire format: magic byte 0, 4-byte id). */
async function recordsWithSchemaId(rt: Runtime, topic: string, id: number): Promise<number> {
  let count = 0;
  await readToEnd({
    kafka: rt.kafka,
    admin: rt.admin,
    topic,
    groupId: `rollout-count-${Date.now()}`,
    mode: 'all',
    onMessage: async (_partition, { value }) => {
      if (value && value.length > 5 && value[0] === 0 && value.readUInt32BE(1) === id) count++;
    },
  });
  return count;
}

const terminationGrace = (deploymentYaml: string): number => Number(/terminationGracePeriodSeconds: (\d+)/.exec(deploymentYaml)?.[1] ?? 30);

/** Sign-up, a live webhook for it, its key from the e-mail, and a collection of pushed files to query. */
async function provisionKey(endpoints: Record<Face, string[]>, secret: string, variant: number, mailpit: string): Promise<string> {
  const { randomUUID } = await import('node:crypto');
  const { deliver, subscriptionPayload } = await import('../support/lemonsqueezy.ts');
  const { keysMailedTo } = await import('../support/mailpit.ts');
  const email = `rollout-${randomUUID()}@example.test`;
  const password = `pw-${randomUUID()}`;
  // Retried as a client does (a pod still connecting answers 503); the last answer is in the error.
  let last = 'no answer';
  const user = await until(
    'the set-up sign-up',
    async () => {
      const signup = await fetch(`${endpoints.accounts[0]}/auth/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password, name: 'Rollout' }),
      });
      const body = (await signup.json().catch(() => ({}))) as { user?: { id: string } };
      if (signup.status === 201 && body.user) return body.user;
      last = `${signup.status}: ${JSON.stringify(body)}`;
      return undefined;
    },
    60_000,
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}; the last answer was ${last}`);
  });
  const payload = subscriptionPayload('subscription_created', {
    subscriptionId: String(Date.now()),
    userId: user.id,
    attributes: { user_email: email, variant_id: variant, test_mode: false },
    meta: { test_mode: false },
  });
  await deliver(endpoints.webhooks[0]!, secret, payload);
  const key = await until('the key by e-mail', async () => (await keysMailedTo(mailpit, email))[0], 120_000);
  const post = (path: string, body: unknown) =>
    fetch(`${endpoints.rag[0]}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify(body),
    });
  await post('/api/rag/setup', { collectionName: 'rollout' });
  const indexed = await post('/api/rag/index', {
    collectionName: 'rollout',
    files: [{ path: 'src/shipping.ts', content: 'export const shippingCost = (kg: number) => 4.5 + kg * 1.2;\n' }],
    wait: true,
  });
  if (indexed.status !== 200) throw new Error(`indexing the rollout collection answered ${indexed.status}`);
  return key;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[rollout] FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
