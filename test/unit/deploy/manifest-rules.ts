import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IHorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import type { IIngress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import type { INetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import type { IPodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IPersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IService } from 'kubernetes-models/v1/Service';
import { describeManifest, type Manifest } from './kubernetes-schema.ts';

/** What the project's own code says the manifests may name. */
export interface ProjectFacts {
  /** Services `svc run` knows (app/registry.ts SERVICES). */
  services: ReadonlySet<string>;
  /** Variables services/platform/config.ts reads (CONFIG_VARIABLES). */
  variables: ReadonlySet<string>;
  /** The port each service's own HTTP face listens on by default (config.ports), by service name. */
  facePorts: Readonly<Record<string, number>>;
  /** Services whose process also serves the back office on ADMIN_PORT. */
  adminServices: ReadonlySet<string>;
  /** What each process serves on every port (services/platform/http/app.ts). */
  healthPaths: { readiness: string; liveness: string };
  /** Services with a HorizontalPodAutoscaler required (issue 25: validate and rag). */
  autoscaled: readonly string[];
  /** Ports nothing public may reach (OPS_PORT: /metrics; ADMIN_PORT: the back office), by container port name. */
  privatePortNames: ReadonlySet<string>;
  /**
   * The public addresses users are sent to, each with the path the code appends to it (null: the URL
   * itself is the page) and the Services that answer there: an Ingress must route it to one of them.
   */
  publicUrls: Readonly<Record<string, { path: string | null; services: readonly string[] }>>;
  /** The stop timings config.ts derives from a container's environment (its defaults applied). */
  shutdownOf(env: ReadonlyMap<string, string>): { delayMs: number; drainMs: number; graceMs: number };
  /** The longest operation a request of the service may run (a capture), which its drain must cover. */
  longestRequestMs: Readonly<Record<string, number>>;
  /** The partitions production creates per topic when KAFKA_TOPIC_PARTITIONS is unset. */
  productionPartitions: number;
}

/** The Service an Ingress routes `url` to (Exact before the longest Prefix, as ingress-nginx does), or undefined. */
export function ingressRoute(manifests: readonly Manifest[], url: string): string | undefined {
  const { hostname, pathname } = new URL(url);
  let best: { service: string; length: number; exact: boolean } | undefined;
  for (const ing of of<IIngress>(manifests, 'Ingress'))
    for (const rule of ing.spec?.rules ?? []) {
      if (rule.host !== undefined && rule.host !== hostname) continue;
      for (const p of rule.http?.paths ?? []) {
        const path = p.path ?? '/';
        const exact = p.pathType === 'Exact';
        const matches = exact
          ? pathname === path
          : path === '/' || pathname === path.replace(/\/$/, '') || pathname.startsWith(`${path.replace(/\/$/, '')}/`);
        const service = p.backend.service?.name;
        if (!matches || service === undefined) continue;
        if (!best || (exact && !best.exact) || (exact === best.exact && path.length > best.length))
          best = { service, length: path.length, exact };
      }
    }
  return best?.service;
}

const SVC_CONFIG = 'svc-config';

const of = <T>(manifests: readonly Manifest[], kind: string): T[] => manifests.filter((m) => m.kind === kind) as T[];

const isSvcContainer = (c: IContainer): boolean => c.args?.[0] === 'run';

const subset = (wanted: Readonly<Record<string, string>> | undefined, labels: Readonly<Record<string, string>> | undefined): boolean =>
  wanted !== undefined && Object.keys(wanted).length > 0 && Object.entries(wanted).every(([k, v]) => labels?.[k] === v);

/** Secrets by name, key and a stand-in value: what the deploy files expect to exist in the cluster. */
export type SecretValues = Readonly<Record<string, Readonly<Record<string, string>>>>;

/**
 * The variables a container gets, in Kubernetes' order: envFrom (ConfigMaps, Secrets) then env, the
 * later winning. Secrets give their stand-in values; a reference to a Secret or key not in `secrets`
 * is a problem.
 */
export function environment(
  c: IContainer,
  configMaps: readonly IConfigMap[],
  secrets: SecretValues = {},
  problems: string[] = [],
): Map<string, string> {
  const env = new Map<string, string>();
  for (const from of c.envFrom ?? []) {
    if (from.configMapRef) {
      const cm = configMaps.find((x) => x.metadata?.name === from.configMapRef?.name);
      if (!cm) problems.push(`${c.name}: envFrom names ConfigMap ${from.configMapRef.name}, which these files do not hold`);
      for (const [k, v] of Object.entries(cm?.data ?? {})) env.set(k, v);
    }
    const secretName = from.secretRef?.name;
    if (secretName !== undefined) for (const [k, v] of Object.entries(secrets[secretName] ?? {})) env.set(k, v);
  }
  for (const e of c.env ?? []) {
    const ref = e.valueFrom?.secretKeyRef;
    const value = ref ? secrets[ref.name ?? '']?.[ref.key] : e.value;
    if (value === undefined)
      problems.push(`${c.name}: ${e.name} has no value${ref ? ` (Secret ${ref.name ?? '?'} key ${ref.key} unknown)` : ''}`);
    else env.set(e.name, value);
  }
  return env;
}

/** The containers that run svc (`args: ["run", ...]`), with the Deployment they belong to. */
export function svcContainers(manifests: readonly Manifest[]): { deployment: string; container: IContainer }[] {
  return of<IDeployment>(manifests, 'Deployment').flatMap((d) =>
    (d.spec?.template.spec?.containers ?? [])
      .filter(isSvcContainer)
      .map((container) => ({ deployment: d.metadata?.name ?? '(unnamed)', container })),
  );
}

/**
 * The project's rules for its deploy files, beyond the Kubernetes schema: what the code runs,
 * reads and serves. Returns every problem found, empty when there is none.
 */
export function projectProblems(manifests: readonly Manifest[], facts: ProjectFacts): string[] {
  const problems: string[] = [];
  const deployments = of<IDeployment>(manifests, 'Deployment');
  const configMaps = of<IConfigMap>(manifests, 'ConfigMap');
  const pdbs = of<IPodDisruptionBudget>(manifests, 'PodDisruptionBudget');
  const hpas = of<IHorizontalPodAutoscaler>(manifests, 'HorizontalPodAutoscaler');
  const services = of<IService>(manifests, 'Service');

  for (const [k] of Object.entries(configMaps.find((cm) => cm.metadata?.name === SVC_CONFIG)?.data ?? {}))
    if (!facts.variables.has(k)) problems.push(`ConfigMap/${SVC_CONFIG}: ${k} is not a variable services/platform/config.ts knows`);

  const deployed = new Set<string>();
  for (const d of deployments) {
    const where = `Deployment/${d.metadata?.name ?? '(unnamed)'}`;
    const containers = (d.spec?.template.spec?.containers ?? []).filter(isSvcContainer);
    if (containers.length === 0) continue;
    const podLabels = d.spec?.template.metadata?.labels;
    for (const c of containers) {
      const names = (c.args ?? []).slice(1);
      if (names.length === 0) problems.push(`${where}: "run" names no service`);
      for (const name of names) {
        if (name === 'all') problems.push(`${where}: runs "all"; the scaled topology runs one service per Deployment`);
        else if (!facts.services.has(name)) problems.push(`${where}: runs "${name}", which svc does not know`);
        deployed.add(name);
      }
      const env = environment(c, configMaps);
      for (const e of c.env ?? [])
        if (!facts.variables.has(e.name)) problems.push(`${where}: sets ${e.name}, which services/platform/config.ts does not know`);
      // The ports this process listens on: OPS_PORT, each service's face, ADMIN_PORT where it serves one.
      const listening = new Set<number>();
      const ops = env.get('OPS_PORT');
      if (ops !== undefined) listening.add(Number(ops));
      for (const name of names) {
        const face = facts.facePorts[name];
        if (face !== undefined) listening.add(face);
        const admin = env.get('ADMIN_PORT');
        if (facts.adminServices.has(name) && admin !== undefined) listening.add(Number(admin));
      }
      for (const p of c.ports ?? [])
        if (!listening.has(p.containerPort))
          problems.push(
            `${where}: port ${p.name ?? ''} ${p.containerPort} is not one the process listens on (${[...listening].join(', ')})`,
          );
      const probes = [
        ['readinessProbe', c.readinessProbe, facts.healthPaths.readiness],
        ['startupProbe', c.startupProbe, facts.healthPaths.readiness],
        ['livenessProbe', c.livenessProbe, facts.healthPaths.liveness],
      ] as const;
      for (const [kind, probe, path] of probes) {
        if (kind !== 'startupProbe' && probe === undefined) problems.push(`${where}: no ${kind}`);
        if (probe === undefined) continue;
        if (probe.httpGet?.path !== path)
          problems.push(`${where}: ${kind} asks ${probe.httpGet?.path ?? '(no HTTP path)'}, the services serve ${path}`);
        const port = probe.httpGet?.port;
        const number = typeof port === 'number' ? port : c.ports?.find((p) => p.name === port)?.containerPort;
        if (number === undefined || !listening.has(number))
          problems.push(`${where}: ${kind} port ${String(port)} is not one the process listens on`);
      }
      if (c.resources?.requests === undefined || c.resources.limits === undefined)
        problems.push(`${where}: no resource requests and limits`);
    }
    // Every svc service is stateless (state is in Kafka, MongoDB and PostgreSQL): two replicas at least, and a PDB.
    // Where an autoscaler owns the count, the Deployment names none: `kubectl apply` would reset its choice.
    const hpa = hpas.find((h) => h.spec?.scaleTargetRef.kind === 'Deployment' && h.spec.scaleTargetRef.name === d.metadata?.name);
    if (hpa) {
      if (d.spec?.replicas !== undefined)
        problems.push(`${where}: sets replicas (${d.spec.replicas}) beside its HorizontalPodAutoscaler, which owns the count`);
      if ((hpa.spec?.minReplicas ?? 1) < 2) problems.push(`${where}: its autoscaler may go below 2 replicas`);
    } else {
      const replicas = d.spec?.replicas ?? 1;
      if (replicas < 2) problems.push(`${where}: ${replicas} replica(s); a stateless service runs at least 2`);
    }
    // Stopping: unready but serving while the endpoints update, a drain that covers the longest request,
    // and the kubelet's SIGKILL only after the whole stop.
    const grace = d.spec?.template.spec?.terminationGracePeriodSeconds ?? 30;
    for (const c of containers) {
      const env = environment(c, configMaps);
      const stop = facts.shutdownOf(env);
      if (stop.delayMs < 5000)
        problems.push(`${where}: SHUTDOWN_DELAY_MS ${stop.delayMs}: the listener would close before the endpoints drop the pod`);
      const longest = Math.max(0, ...(c.args ?? []).slice(1).map((name) => facts.longestRequestMs[name] ?? 0));
      if (stop.drainMs < longest)
        problems.push(`${where}: SHUTDOWN_DRAIN_MS ${stop.drainMs} is shorter than its longest request (${longest} ms)`);
      if ((stop.delayMs + stop.graceMs) / 1000 + 5 > grace)
        problems.push(
          `${where}: terminationGracePeriodSeconds ${grace} < SHUTDOWN_DELAY_MS + SHUTDOWN_GRACE_MS + 5 s (${(stop.delayMs + stop.graceMs) / 1000 + 5} s): killed mid-drain`,
        );
      // A consumer group has at most one active member per partition.
      const partitions = Number(env.get('KAFKA_TOPIC_PARTITIONS') ?? facts.productionPartitions);
      const most = Math.max(d.spec?.replicas ?? 1, hpa?.spec?.maxReplicas ?? 0);
      if (partitions < most) problems.push(`${where}: ${partitions} partitions per topic, fewer than its ${most} replicas at most`);
    }
    // Volumes: every claim is one of these files', and names its storage class.
    for (const v of d.spec?.template.spec?.volumes ?? [])
      if (
        v.persistentVolumeClaim &&
        !of<IPersistentVolumeClaim>(manifests, 'PersistentVolumeClaim').some((c) => c.metadata?.name === v.persistentVolumeClaim?.claimName)
      )
        problems.push(`${where}: mounts the claim ${v.persistentVolumeClaim.claimName}, which these files do not hold`);
    if (!pdbs.some((p) => subset(p.spec?.selector?.matchLabels, podLabels)))
      problems.push(`${where}: no PodDisruptionBudget selects its pods`);
  }
  for (const c of of<IPersistentVolumeClaim>(manifests, 'PersistentVolumeClaim'))
    if (!c.spec?.storageClassName)
      problems.push(
        `PersistentVolumeClaim/${c.metadata?.name ?? '(unnamed)'}: names no storage class (a default class may not exist, or not serve its access mode)`,
      );
  // The addresses users are sent to: set, and served by an Ingress routing them to a Service that answers.
  const config = configMaps.find((cm) => cm.metadata?.name === SVC_CONFIG)?.data ?? {};
  for (const [variable, { path, services: answering }] of Object.entries(facts.publicUrls)) {
    const value = config[variable];
    if (value === undefined) {
      problems.push(`ConfigMap/${SVC_CONFIG}: ${variable} is not set (production refuses to start without it)`);
      continue;
    }
    const target = path === null ? value : value.replace(/\/$/, '') + path;
    const routed = ingressRoute(manifests, target);
    if (routed === undefined || !answering.includes(routed)) {
      const { host, pathname } = new URL(target);
      problems.push(
        `ConfigMap/${SVC_CONFIG}: ${variable} (${value}): no Ingress routes ${host}${pathname} to ${answering.join(' or ')}${routed ? ` (it goes to ${routed})` : ''}`,
      );
    }
  }
  for (const name of facts.autoscaled) {
    const target = deployments.find((d) => d.spec?.template.spec?.containers.some((c) => isSvcContainer(c) && c.args?.includes(name)));
    if (!target || !hpas.some((h) => h.spec?.scaleTargetRef.name === target.metadata?.name))
      problems.push(`${name}: no HorizontalPodAutoscaler for the Deployment running it`);
  }
  for (const name of facts.services) if (!deployed.has(name)) problems.push(`${name}: svc runs it, but no Deployment does`);

  // Services: each selects pods, and targets a port those pods name; none targets a private port by name
  // unless it says so in its own name (keys-admin), and Ingresses reach none of those.
  const portsOf = (s: IService) =>
    deployments
      .filter((d) => subset(s.spec?.selector, d.spec?.template.metadata?.labels))
      .flatMap((d) => d.spec?.template.spec?.containers.flatMap((c) => c.ports ?? []) ?? []);
  for (const s of services) {
    const where = `Service/${s.metadata?.name ?? '(unnamed)'}`;
    if (s.spec?.clusterIP === 'None') continue;
    const ports = portsOf(s);
    if (ports.length === 0) problems.push(`${where}: selects no pods of these files`);
    for (const p of s.spec?.ports ?? []) {
      const target = p.targetPort ?? p.port;
      if (!ports.some((cp) => cp.name === target || cp.containerPort === target))
        problems.push(`${where}: targets ${String(target)}, which its pods do not expose`);
      if (typeof target === 'string' && target === 'ops') problems.push(`${where}: publishes OPS_PORT (/metrics)`);
    }
  }
  for (const ing of of<IIngress>(manifests, 'Ingress')) {
    for (const rule of ing.spec?.rules ?? [])
      for (const path of rule.http?.paths ?? []) {
        const backend = path.backend.service;
        const where = `Ingress/${ing.metadata?.name ?? '(unnamed)'} ${path.path ?? ''}`;
        const s = services.find((x) => x.metadata?.name === backend?.name);
        const port = s?.spec?.ports?.find((p) => p.name === backend?.port?.name || p.port === backend?.port?.number);
        if (!s || !port) {
          problems.push(
            `${where}: routes to ${backend?.name ?? '?'}:${backend?.port?.name ?? backend?.port?.number ?? '?'}, which no Service here has`,
          );
          continue;
        }
        const target = port.targetPort ?? port.port;
        const named = typeof target === 'string' ? target : portsOf(s).find((cp) => cp.containerPort === target)?.name;
        if (named !== undefined && facts.privatePortNames.has(named)) problems.push(`${where}: publishes the private port ${named}`);
      }
  }
  // NetworkPolicy: a default deny for every svc pod, and no rule letting anyone at all reach a private port.
  const policies = of<INetworkPolicy>(manifests, 'NetworkPolicy');
  if (!policies.some((p) => p.spec?.podSelector?.matchLabels?.['app.kubernetes.io/name'] === 'svc' && (p.spec.ingress ?? []).length === 0))
    problems.push('NetworkPolicy: none denies ingress to every svc pod by default');
  for (const p of policies)
    for (const rule of p.spec?.ingress ?? [])
      for (const port of rule.ports ?? [])
        if (typeof port.port === 'string' && facts.privatePortNames.has(port.port) && (rule.from ?? []).length === 0)
          problems.push(`${describeManifest(p as unknown as Manifest)}: opens ${port.port} to everyone`);
  return problems;
}
