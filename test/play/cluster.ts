/**
 * The pods of deploy/kubernetes on podman (`npm run play` and `npm run rollout`): the local stack on the
 * pods' network gateway, the overlay, kube play, Services as DNS names, readiness asked as the kubelet would.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startStack, type Stack } from '../../deploy/local/stack.ts';
import { NETWORK, type OverlayOptions, overlay, readShipped, type Played } from './overlay.ts';
import { loadPolicy } from '../../events/schema-compatibility.ts';
import { SchemaRegistryClient, type RegisteredVersion } from '../../events/schema-registry.ts';
import { EventCatalog } from '../../events/catalog.ts';
import { EVENT_DEFINITIONS } from '../../app/registry.ts';
import { loadConfig } from '../../services/platform/config.ts';

export const ROOT = resolve(import.meta.dirname, '../..');
const CONTAINERS_CONF = join(ROOT, 'deploy/podman/containers.conf');
export const CACHE = process.env.SVC_CACHE_DIR ?? join(homedir(), '.cache/svc');
const run = promisify(execFile);
export const say = (line: string) => process.stdout.write(`[play] ${line}\n`);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function podman(...args: string[]): Promise<string> {
  const { stdout } = await run('podman', args, { env: { ...process.env, CONTAINERS_CONF }, maxBuffer: 64 * 1024 * 1024 });
  return stdout.trim();
}

export async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 200; ; delay = Math.min(delay * 2, 2000)) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(delay);
  }
}

export interface Pod {
  name: string;
  deployment: string;
  ip: string;
}

export interface Cluster {
  stack: Stack;
  played: Played;
  pods: Pod[];
  /** Where the overlay, the seccomp profiles and the secrets' files are. */
  work: string;
  built: string;
  size: number;
  /** Seconds from the pods' start to the last one ready. */
  slowestReadyS: number;
  down(): Promise<void>;
}

/** Plays deploy/kubernetes and waits until every pod is ready; `down()` removes the pods, the stack and the network's holder. */
export async function bringUp(options: OverlayOptions = {}): Promise<Cluster> {
  execFileSync('bash', [join(ROOT, 'deploy/podman/install.sh')], { stdio: 'inherit' });
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const built = `localhost/svc:${version}`;
  // An image of the same version built from older sources would run old code in the pods: its label
  // (image.sh) names the sources it was built from.
  const sources = execFileSync('bash', [join(ROOT, 'deploy/podman/sources-hash.sh')], { encoding: 'utf8' }).trim();
  const labelled = await podman('image', 'inspect', built, '--format', '{{index .Labels "svc.sources"}}').catch(() => undefined);
  if (labelled !== sources) {
    say(labelled === undefined ? `no ${built}: building it (npm run image)` : `${built} was built from other sources: rebuilding it`);
    execFileSync('bash', [join(ROOT, 'deploy/podman/image.sh')], { stdio: 'inherit' });
  }
  const shipped = readShipped(join(ROOT, 'deploy/kubernetes'));
  // The manifests name the registry's image; the cluster would pull it, here it is the one just built.
  await podman('tag', built, shipped.image);
  const size = Number(await podman('image', 'inspect', built, '--format', '{{.Size}}'));

  // Left over from a run that was killed: pods of these Deployments, the network's holder.
  const existing = (await podman('pod', 'ps', '--format', '{{.Name}}')).split('\n').filter(Boolean);
  const stale = existing.filter((p) => p === `${NETWORK.name}-net` || shipped.deployments.some((d) => p.startsWith(`${d}-`)));
  if (stale.length > 0) await podman('pod', 'rm', '-f', ...stale);
  if (
    !(await podman('network', 'exists', NETWORK.name).then(
      () => true,
      () => false,
    ))
  )
    await podman('network', 'create', '--subnet', NETWORK.subnet, '--gateway', NETWORK.gateway, NETWORK.name);
  // The bridge (and so the gateway address the stack listens on) exists while a pod is on the network.
  await podman('pod', 'create', '--name', `${NETWORK.name}-net`, '--network', NETWORK.name);
  await podman('pod', 'start', `${NETWORK.name}-net`);

  const dataDir = join(CACHE, 'play', `stack-${Date.now()}`);
  say(`starting the local stack on ${NETWORK.gateway} (data in ${dataDir})`);
  let stack: Stack | undefined;
  let played: Played | undefined;
  const work = join(CACHE, 'play', 'overlay');
  try {
    stack = await startStack({
      dataDir,
      ports: 'auto',
      host: NETWORK.gateway,
      clientNetwork: NETWORK.subnet,
      ragDatabase: true,
      // The audits of `npm run rollout` count every e-mail: Mailpit keeps them all.
      mailMaxMessages: 0,
      progress: (line) => say(`stack: ${line}`),
    });
    played = overlay(shipped, stack.env, options);
    rmSync(work, { recursive: true, force: true });
    mkdirSync(join(work, 'seccomp', 'profiles'), { recursive: true });
    // What the DaemonSet does on a node: the ConfigMap's profile in the node's seccomp profiles folder.
    for (const [file, profile] of Object.entries(played.seccompProfiles)) writeFileSync(join(work, 'seccomp', 'profiles', file), profile);
    const manifest = join(work, 'svc.yaml');
    writeFileSync(manifest, played.yaml);
    // The Secrets, as podman 4.3 reads them: a JSON map of base64 values per secret.
    for (const [secret, values] of Object.entries(played.podmanSecrets)) {
      await podman('secret', 'rm', secret).catch(() => undefined);
      const file = join(work, `${secret}.json`);
      writeFileSync(
        file,
        JSON.stringify(Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Buffer.from(v).toString('base64')]))),
        {
          mode: 0o600,
        },
      );
      await podman('secret', 'create', secret, file);
      rmSync(file);
    }
    say(`not run by kube play (checked by test/unit/deploy rules instead): ${played.skipped.join(', ')}`);
    // The deploy step before any pod (deploy/kubernetes/config.yaml): every event schema registered,
    // as a CI step does with the ConfigMap's registry and topic names; the pods refuse to publish an
    // unregistered version (each sign-up answered 503 without it).
    const registered = await registerSchemas(stack.env.SCHEMA_REGISTRY_URL);
    say(`svc schemas register: ${registered.length} schema versions registered`);

    const t0 = Date.now();
    await podman(
      'kube',
      'play',
      '--start=false',
      '--network',
      NETWORK.name,
      '--seccomp-profile-root',
      join(work, 'seccomp', 'profiles'),
      manifest,
    );
    const pods: Pod[] = [];
    for (const d of played.deployments)
      for (let i = 0; i < d.replicas; i++) pods.push({ name: `${d.name}-pod-${i}`, deployment: d.name, ip: '' });
    // Services: a DNS name per Service on the pods' network, answering with its pods' addresses.
    for (const pod of pods) {
      const infra = await podman('pod', 'inspect', pod.name, '--format', '{{.InfraContainerID}}');
      const aliases = played.services.filter((s) => s.deployments.includes(pod.deployment)).map((s) => s.name);
      if (aliases.length === 0) continue;
      await podman('network', 'disconnect', NETWORK.name, infra);
      await podman('network', 'connect', ...aliases.flatMap((a) => ['--alias', a]), NETWORK.name, infra);
    }
    await Promise.all(pods.map((p) => podman('pod', 'start', p.name)));
    say(`${pods.length} pods of ${played.deployments.length} Deployments started in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    for (const pod of pods) {
      const infra = await podman('pod', 'inspect', pod.name, '--format', '{{.InfraContainerID}}');
      pod.ip = await podman('inspect', infra, '--format', `{{(index .NetworkSettings.Networks "${NETWORK.name}").IPAddress}}`);
    }

    // Readiness as the kubelet asks it: GET /health on each pod's ops port answers 200.
    const readyAt = new Map<string, number>();
    await Promise.all(
      pods.map(async (pod) => {
        try {
          await until(
            `${pod.name} ready`,
            async () =>
              (await fetch(`http://${pod.ip}:9090/health`, { signal: AbortSignal.timeout(3000) })).status === 200 ? true : undefined,
            480_000,
          );
          readyAt.set(pod.name, Date.now() - t0);
        } catch (err) {
          const logs = await podman('logs', '--tail', '30', `${pod.name}-svc`).catch((e: unknown) => String(e));
          throw new Error(`${(err as Error).message}\n--- ${pod.name} logs ---\n${logs}`);
        }
      }),
    );
    const slowest = Math.max(...readyAt.values());
    for (const pod of pods)
      say(`ready: ${pod.name.padEnd(16)} ${pod.ip.padEnd(12)} after ${((readyAt.get(pod.name) ?? 0) / 1000).toFixed(1)} s`);
    say(`every pod ready ${(slowest / 1000).toFixed(1)} s after they started`);

    const upStack = stack;
    const upPlayed = played;
    return {
      stack: upStack,
      played: upPlayed,
      pods,
      work,
      built,
      size,
      slowestReadyS: slowest / 1000,
      down: () => down(upPlayed, upStack),
    };
  } catch (err) {
    await down(played, stack);
    throw err;
  }

  async function down(p: Played | undefined, s: Stack | undefined): Promise<void> {
    if (p) {
      // Every pod on the network but its holder: the played ones and any a rollout added.
      const names = (await podman('pod', 'ps', '--format', '{{.Name}}')).split('\n').filter((n) => n && n !== `${NETWORK.name}-net`);
      const ours = names.filter((n) => shipped.deployments.some((d) => n.startsWith(`${d}-`)));
      if (ours.length > 0) await podman('pod', 'rm', '-f', '-t', '5', ...ours).catch((err: unknown) => say(`pod rm: ${String(err)}`));
      for (const secret of Object.keys(p.podmanSecrets)) await podman('secret', 'rm', secret).catch(() => undefined);
    }
    await s?.stop().catch(() => undefined);
    await podman('pod', 'rm', '-f', `${NETWORK.name}-net`).catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A pod's address on the network, from its infra container. */
export async function podIp(pod: string): Promise<string> {
  const infra = await podman('pod', 'inspect', pod, '--format', '{{.InfraContainerID}}');
  return podman('inspect', infra, '--format', `{{(index .NetworkSettings.Networks "${NETWORK.name}").IPAddress}}`);
}

/**
 * `svc schemas register` against the registry the pods use, with the manifests' topic names (no
 * prefix), from `schemasDir` (default: this tree's; a release's own for npm run rollout's v2).
 */
export async function registerSchemas(registryUrl: string, schemasDir?: string): Promise<RegisteredVersion[]> {
  const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'warn', SCHEMA_REGISTRY_URL: registryUrl, KAFKA_TOPIC_PREFIX: '' });
  const catalog = new EventCatalog(EVENT_DEFINITIONS, schemasDir, { topicPrefix: config.kafka.topicPrefix });
  return new SchemaRegistryClient(config.schemaRegistry).register(catalog, loadPolicy(catalog.schemasDir));
}
