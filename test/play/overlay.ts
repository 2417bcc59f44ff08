import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { StackEnv } from '../../deploy/local/stack.ts';

/** The pods' network: its gateway is where the local stack listens, so the pods reach it and nothing else does. */
export const NETWORK = { name: 'svc-play', subnet: '10.89.42.0/24', gateway: '10.89.42.1' } as const;

type Doc = Record<string, unknown> & { kind?: string; metadata?: { name?: string; annotations?: Record<string, string> } };

interface Container {
  name: string;
  image?: string;
  ports?: { name?: string; containerPort: number }[];
}

interface PodSpec {
  securityContext?: { seccompProfile?: { type: string; localhostProfile?: string } };
  containers: Container[];
  volumes?: { name: string; secret?: unknown; emptyDir?: unknown }[];
}

interface DeploymentDoc extends Doc {
  spec: {
    replicas?: number;
    template: { metadata: { labels: Record<string, string>; annotations?: Record<string, string> }; spec: PodSpec };
  };
}

export interface Shipped {
  /** Every document of the files `kubectl apply -f deploy/kubernetes/` applies. */
  docs: Doc[];
  deployments: string[];
  /** The image the Deployments name. */
  image: string;
}

/** deploy/kubernetes as `kubectl apply -f` reads it: the YAML files of the folder itself, not its subfolders. */
export function readShipped(dir: string): Shipped {
  const docs = readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => d.toJS() as Doc | null))
    .filter((d): d is Doc => d !== null);
  const deployments = docs.filter((d): d is DeploymentDoc => d.kind === 'Deployment');
  const images = new Set(deployments.flatMap((d) => d.spec.template.spec.containers.map((c) => c.image ?? '')));
  if (images.size !== 1) throw new Error(`the Deployments name ${images.size} images; one is built`);
  return { docs, deployments: deployments.map((d) => d.metadata?.name ?? ''), image: [...images][0] ?? '' };
}

export interface Played {
  /** The documents kube play runs. */
  yaml: string;
  /** Podman secrets to create first (name → key → value): what a cluster's Secrets hold. */
  podmanSecrets: Record<string, Record<string, string>>;
  secrets: { PAYMENT_WEBHOOK_SECRET: string };
  deployments: { name: string; replicas: number }[];
  /** Each Service and the Deployments whose pods it selects. */
  services: { name: string; deployments: string[] }[];
  /** Seccomp profiles the DaemonSet would put on each node, by file name. */
  seccompProfiles: Record<string, string>;
  proVariant: number;
  /** A page of the cluster's own for the capture: the console's login page at its Service. */
  captureUrl: string;
  /** What was not run, and why. */
  skipped: string[];
}

const hex = () => randomBytes(32).toString('hex');

/**
 * The shipped documents with what a cluster would provide: the servers' addresses (the stack's), the
 * broker's security (the local Kafka is plaintext with no users: KAFKA_SSL and KAFKA_SASL_* out, the CA
 * volume an empty folder), Secrets with fresh values, the count an autoscaler would hold (its minimum),
 * and the console's Service allowed as a capture target. Everything else is as shipped: images, args,
 * env, probes, resources, securityContext, volumes. Podman 4.3 reads a pod's Localhost seccomp profile
 * only from the older annotation, so the field is copied there, unchanged in meaning.
 */
export interface OverlayOptions {
  /**
   * One client address sends every sign-up of `npm run rollout`: the per-address and global sign-up limits
   * (10 an hour, 60 a minute) are raised for it, as `npm run scale` does; they are not what it measures.
   */
  oneClientAddress?: boolean;
}

export function overlay(shipped: Shipped, env: StackEnv, options: OverlayOptions = {}): Played {
  const docs = structuredClone(shipped.docs);
  const skipped: string[] = [];
  const byKind = (kind: string) => docs.filter((d) => d.kind === kind);
  const name = (d: Doc) => d.metadata?.name ?? '';
  const deployments = byKind('Deployment') as DeploymentDoc[];
  const hpas = byKind('HorizontalPodAutoscaler') as (Doc & { spec: { scaleTargetRef: { name: string }; minReplicas?: number } })[];

  const config = docs.find((d) => d.kind === 'ConfigMap' && name(d) === 'svc-config') as
    | (Doc & { data: Record<string, string> })
    | undefined;
  if (!config) throw new Error('no ConfigMap svc-config');
  const data = config.data;
  data.KAFKA_BROKERS = env.KAFKA_BROKERS;
  data.MONGODB_URI = env.MONGODB_URI;
  data.SMTP_URL = env.SMTP_URL;
  // The event schemas' registry (issue 38): the local stack's, on the host the pods reach.
  data.SCHEMA_REGISTRY_URL = env.SCHEMA_REGISTRY_URL;
  data.KAFKA_REPLICATION_FACTOR = '1';
  for (const k of ['KAFKA_SSL', 'KAFKA_SSL_CA_FILE', 'KAFKA_SASL_MECHANISM', 'KAFKA_SASL_USERNAME']) delete data[k];
  const console = deployments.find((d) => name(d) === 'console');
  const consolePort = console?.spec.template.spec.containers[0]?.ports?.find((p) => p.name === 'http')?.containerPort ?? 8086;
  data.CAPTURE_ALLOWED_HOSTS = `console:${consolePort}`;
  if (options.oneClientAddress) {
    data.SIGNUPS_PER_IP_PER_HOUR = '1000000';
    data.SIGNUPS_PER_MINUTE = '1000000';
  }

  const secrets = {
    JWT_SECRET: hex(),
    WEBHOOK_SECRET: hex(),
    KEY_ENCRYPTION_KEY: hex(),
    CONSOLE_SECRET: hex(),
    PAYMENT_WEBHOOK_SECRET: hex(),
    PAYMENT_VARIANT_TIERS: '1001:pro,1002:team',
  };
  const podmanSecrets = {
    'svc-secrets': secrets,
    'svc-rag-database': { RAG_DATABASE_URL: env.RAG_DATABASE_URL },
  };

  const seccompProfiles: Record<string, string> = {};
  const profiles = docs.find((d) => d.kind === 'ConfigMap' && name(d) === 'svc-seccomp-profiles') as
    | (Doc & { data: Record<string, string> })
    | undefined;
  for (const [file, content] of Object.entries(profiles?.data ?? {})) seccompProfiles[file] = content;

  const played: { name: string; replicas: number }[] = [];
  for (const d of deployments) {
    const hpa = hpas.find((h) => h.spec.scaleTargetRef.name === name(d));
    if (hpa) d.spec.replicas = hpa.spec.minReplicas ?? 1;
    played.push({ name: name(d), replicas: d.spec.replicas ?? 1 });
    const pod = d.spec.template.spec;
    const profile = pod.securityContext?.seccompProfile;
    if (profile?.type === 'Localhost' && profile.localhostProfile) {
      if (!seccompProfiles[basename(profile.localhostProfile)])
        throw new Error(`${name(d)}: no DaemonSet ConfigMap holds ${profile.localhostProfile}`);
      d.spec.template.metadata.annotations = {
        ...d.spec.template.metadata.annotations,
        'seccomp.security.alpha.kubernetes.io/pod': `localhost/${basename(profile.localhostProfile)}`,
      };
    }
    for (const c of pod.containers as (Container & Record<string, unknown>)[]) {
      // kube play 4.3 publishes every containerPort on the host (a pod does not), which collides between
      // replicas: the ports go, and the probes get the numbers their names stood for.
      const ports = new Map((c.ports ?? []).map((p) => [p.name, p.containerPort]));
      for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
        const get = (c[probe] as { httpGet?: { port: number | string } } | undefined)?.httpGet;
        if (get && typeof get.port === 'string') get.port = ports.get(get.port) ?? get.port;
      }
      delete c.ports;
    }
    for (const v of pod.volumes ?? [])
      if (v.secret) {
        // The broker's CA (svc-kafka-ca): the local Kafka has no TLS; podman 4.3 cannot mount Secrets.
        delete v.secret;
        v.emptyDir = {};
      }
  }

  const services = (
    byKind('Service') as (Doc & { spec: { selector?: Record<string, string>; ports: { port: number; targetPort?: number | string }[] } })[]
  ).map((s) => {
    // The shipped Deployments: their ports, which the overlay takes off the played ones.
    const selected = (shipped.docs.filter((d) => d.kind === 'Deployment') as DeploymentDoc[]).filter((d) =>
      Object.entries(s.spec.selector ?? {}).every(([k, v]) => d.spec.template.metadata.labels[k] === v),
    );
    // A DNS name stands in for the Service: it can carry its pods' addresses, not map a port.
    for (const p of s.spec.ports)
      for (const d of selected) {
        const target = d.spec.template.spec.containers
          .flatMap((c) => c.ports ?? [])
          .find((cp) => cp.name === p.targetPort || cp.containerPort === p.targetPort);
        if (target && target.containerPort !== p.port)
          throw new Error(`Service/${name(s)} maps ${p.port} to ${target.containerPort}: a DNS name cannot`);
      }
    for (const p of s.spec.ports)
      if (
        !selected.some((d) =>
          d.spec.template.spec.containers.some((c) =>
            (c.ports ?? []).some((cp) => cp.name === p.targetPort || cp.containerPort === (p.targetPort ?? p.port)),
          ),
        )
      )
        throw new Error(`Service/${name(s)}: no pod of these files has its target port`);
    return { name: name(s), deployments: selected.map((d) => name(d)) };
  });

  const run: Doc[] = [config, ...deployments];
  for (const d of docs)
    if (!run.includes(d) && !(d.kind === 'ConfigMap' && name(d) === 'svc-seccomp-profiles') && d.kind !== 'Service')
      skipped.push(`${d.kind}/${name(d)}`);
  return {
    yaml: run.map((d) => stringify(d)).join('---\n'),
    podmanSecrets,
    secrets: { PAYMENT_WEBHOOK_SECRET: secrets.PAYMENT_WEBHOOK_SECRET },
    deployments: played,
    services,
    seccompProfiles,
    proVariant: 1001,
    captureUrl: `http://console:${consolePort}/login`,
    skipped,
  };
}
