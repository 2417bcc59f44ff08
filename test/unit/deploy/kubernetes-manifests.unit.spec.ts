import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import { describeManifest, schemaProblems, type Manifest } from './kubernetes-schema.ts';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { loadConfig } from '../../../services/platform/config.ts';
import { environment, projectProblems, type SecretValues, svcContainers } from './manifest-rules.ts';
import { FACTS } from './project-facts.ts';

const ROOT = join(import.meta.dirname, '../../../deploy/kubernetes');

const HEX64 = 'ab'.repeat(32);

/** Stand-ins for the Secrets config.yaml tells operators to create, with values config.ts accepts. */
const SECRETS: SecretValues = {
  'svc-secrets': {
    JWT_SECRET: HEX64,
    WEBHOOK_SECRET: HEX64,
    KEY_ENCRYPTION_KEY: HEX64,
    CONSOLE_SECRET: HEX64,
    PAYMENT_WEBHOOK_SECRET: 'a-provider-signing-secret',
    PAYMENT_VARIANT_TIERS: '1001:pro,1002:team',
    KAFKA_SASL_PASSWORD: 'a-password',
  },
  'svc-rag-database': { RAG_DATABASE_URL: 'postgres://svc:a-password@db.example.internal:5432/svc' },
};

/** The variables the production image sets (deploy/podman/Containerfile's ENV lines): the start of every container's environment. */
function imageEnvironment(): Map<string, string> {
  const containerfile = readFileSync(join(ROOT, '../podman/Containerfile'), 'utf8');
  const block = /^ENV ((?:.*\\\n)*.*)$/m.exec(containerfile)?.[1] ?? '';
  return new Map([...block.matchAll(/([A-Z0-9_]+)=(\S+)/g)].map((m) => [m[1] ?? '', m[2] ?? '']));
}

const filesUnder = (dir: string, ext: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name), ext) : e.name.endsWith(ext) ? [join(dir, e.name)] : [],
  );

function readManifests(): { file: string; manifest: Manifest }[] {
  return filesUnder(ROOT, '.yaml').flatMap((file) =>
    parseAllDocuments(readFileSync(file, 'utf8')).flatMap((doc) => {
      if (doc.errors.length > 0) throw new Error(`${relative(ROOT, file)}: ${doc.errors.map((e) => e.message).join('; ')}`);
      const value: unknown = doc.toJS();
      if (value === null || value === undefined) return [];
      if (typeof value !== 'object' || Array.isArray(value)) throw new Error(`${relative(ROOT, file)}: a document that is not an object`);
      return [{ file, manifest: value as Manifest }];
    }),
  );
}

describe('the Kubernetes deploy files (unit)', () => {
  const read = readManifests();
  const manifests = read.map((r) => r.manifest);
  const deployment = (name: string): Manifest => {
    const found = manifests.find((m) => m.kind === 'Deployment' && (m.metadata as { name?: string }).name === name);
    if (!found) throw new Error(`no Deployment ${name}`);
    return structuredClone(found);
  };

  it('are split per concern and each document is a Kubernetes object', () => {
    const files = new Set(read.map((r) => relative(ROOT, r.file)));
    for (const f of ['config.yaml', 'ingress.yaml', 'network-policy.yaml', 'keys.yaml', 'rag.yaml', 'indexer.yaml'])
      expect(files).to.include(f);
    expect(files).not.to.include('svc.yaml');
    for (const m of manifests) expect(m, 'apiVersion and kind').to.include.keys('apiVersion', 'kind', 'metadata');
  });

  it('validate against the Kubernetes schemas (kubernetes-models)', () => {
    expect(manifests.flatMap(schemaProblems)).to.deep.equal([]);
  });

  it("keep the project's rules: known services and variables, 2+ replicas and a PDB each, probes the services serve, private ports private", () => {
    expect(projectProblems(manifests, FACTS)).to.deep.equal([]);
  });

  it('give every svc process a configuration config.ts accepts in production (with the Secrets config.yaml names)', () => {
    const documented = [...readFileSync(join(ROOT, 'config.yaml'), 'utf8').matchAll(/--from-literal=([A-Z0-9_]+)=/g)].map((m) => m[1]);
    expect([...new Set(documented)].sort()).to.deep.equal(
      Object.values(SECRETS)
        .flatMap((s) => Object.keys(s))
        .sort(),
    );
    // The CA is a Secret mounted in the cluster; here a PEM stand-in, since config.ts reads the file.
    const dir = mkdtempSync(join(tmpdir(), 'svc-manifests-'));
    try {
      const ca = join(dir, 'ca.pem');
      writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nstand-in\n-----END CERTIFICATE-----\n');
      expect(imageEnvironment().get('RAG_DATA_DIR')).to.equal('/var/lib/svc/rag');
      const configMaps = manifests.filter((m) => m.kind === 'ConfigMap') as unknown as IConfigMap[];
      const containers = svcContainers(manifests);
      expect(containers.map((c) => c.deployment)).to.include.members(['accounts', 'keys', 'rag', 'indexer']);
      for (const { deployment: name, container } of containers) {
        const problems: string[] = [];
        const env = environment(container, configMaps, SECRETS, problems);
        expect(problems, name).to.deep.equal([]);
        expect(env.get('NODE_ENV'), name).to.equal('production');
        if (env.has('KAFKA_SSL_CA_FILE')) env.set('KAFKA_SSL_CA_FILE', ca);
        try {
          loadConfig({ ...Object.fromEntries(imageEnvironment()), ...Object.fromEntries(env) });
        } catch (err) {
          expect.fail(`${name}: ${(err as Error).message}`);
        }
        if (name === 'rag') {
          // The check can fail: the same environment without the database URL is refused.
          env.delete('RAG_DATABASE_URL');
          expect(() => loadConfig({ ...Object.fromEntries(imageEnvironment()), ...Object.fromEntries(env) })).to.throw(/RAG_DATABASE_URL/);
        }
        // Without any one of the public addresses, production refuses to start, naming it.
        for (const variable of ['CONSOLE_PUBLIC_URL', 'ACCOUNTS_PUBLIC_URL', 'RAG_PUBLIC_URL', 'MCP_PUBLIC_URL', 'PRICING_URL']) {
          const without = new Map(env);
          without.delete(variable);
          expect(
            () => loadConfig({ ...Object.fromEntries(imageEnvironment()), ...Object.fromEntries(without) }),
            `${name} ${variable}`,
          ).to.throw(new RegExp(`${variable}: required when NODE_ENV=production`));
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuse an object the schema refuses, and a kind it cannot check', () => {
    const bad = deployment('keys');
    (bad.spec as Record<string, unknown>).replicas = 'two';
    expect(schemaProblems(bad).join('\n')).to.match(/Deployment\/keys: .*replicas must be integer/);
    expect(schemaProblems({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } })).to.have.length(1);
  });

  it('catch a broken manifest by the project rules', () => {
    const cases: [
      string,
      (d: { spec: { replicas: number; template: { spec: { containers: Record<string, unknown>[] } } } }) => void,
      RegExp,
    ][] = [
      ['a count beside the autoscaler', (d) => (d.spec.replicas = 1), /Deployment\/keys: sets replicas \(1\) beside/],
      [
        'unknown service',
        (d) => (d.spec.template.spec.containers[0]!.args = ['run', 'validator']),
        /runs "validator", which svc does not know/,
      ],
      ['run all', (d) => (d.spec.template.spec.containers[0]!.args = ['run', 'all']), /runs "all"/],
      [
        'unknown variable',
        (d) => (d.spec.template.spec.containers[0]!.env = [{ name: 'KEYS_ADMIN_PORT', value: '9082' }]),
        /sets KEYS_ADMIN_PORT/,
      ],
      [
        'probe path',
        (d) => ((d.spec.template.spec.containers[0]!.readinessProbe as { httpGet: { path: string } }).httpGet.path = '/healthz'),
        /readinessProbe asks \/healthz/,
      ],
      [
        'probe port',
        (d) => ((d.spec.template.spec.containers[0]!.livenessProbe as { httpGet: { port: unknown } }).httpGet.port = 8080),
        /livenessProbe port 8080/,
      ],
    ];
    for (const [what, breakIt, expected] of cases) {
      const bad = deployment('keys');
      breakIt(bad as never);
      const others = manifests.filter((m) => !(m.kind === 'Deployment' && (m.metadata as { name?: string }).name === 'keys'));
      expect(projectProblems([...others, bad], FACTS).join('\n'), what).to.match(expected);
    }
    const single = deployment('accounts');
    (single.spec as Record<string, unknown>).replicas = 1;
    const rest = manifests.filter((m) => !(m.kind === 'Deployment' && (m.metadata as { name?: string }).name === 'accounts'));
    expect(projectProblems([...rest, single], FACTS).join('\n')).to.match(/Deployment\/accounts: 1 replica\(s\)/);
    const withoutPdb = manifests.filter((m) => !(m.kind === 'PodDisruptionBudget' && (m.metadata as { name?: string }).name === 'rag'));
    expect(projectProblems(withoutPdb, FACTS).join('\n')).to.match(/Deployment\/rag: no PodDisruptionBudget/);
    const withoutHpa = manifests.filter(
      (m) => !(m.kind === 'HorizontalPodAutoscaler' && (m.metadata as { name?: string }).name === 'keys'),
    );
    expect(projectProblems(withoutHpa, FACTS).join('\n')).to.match(/keys: no HorizontalPodAutoscaler/);
  });

  it('never publish /metrics or the back office', () => {
    const isPublic = (m: Manifest) => m.kind === 'Ingress' && (m.metadata as { name?: string }).name === 'svc-public';
    const original = manifests.find(isPublic);
    if (!original) throw new Error('no Ingress svc-public');
    const ingress = structuredClone(original);
    const spec = ingress.spec as { rules: { http: { paths: { path: string; backend: unknown }[] } }[] };
    spec.rules[0]?.http.paths.push({ path: '/generate', backend: { service: { name: 'keys-admin', port: { name: 'admin' } } } });
    const others = manifests.filter((m) => !isPublic(m));
    expect(projectProblems([...others, ingress], FACTS).join('\n')).to.match(/publishes the private port admin/);
  });

  it('give Chromium (rag, mcp) a seccomp profile that allows user namespaces, and a /dev/shm of its own', () => {
    const profile = JSON.parse(readFileSync(join(ROOT, 'seccomp/svc-chromium.json'), 'utf8')) as {
      defaultAction: string;
      syscalls: { names: string[]; action: string }[];
    };
    const denied = profile.syscalls.filter((s) => s.action !== 'SCMP_ACT_ALLOW').flatMap((s) => s.names);
    expect(profile.defaultAction).to.equal('SCMP_ACT_ALLOW');
    for (const needed of ['clone', 'clone3', 'unshare', 'chroot']) expect(denied, needed).not.to.include(needed);
    for (const dangerous of ['bpf', 'kexec_load', 'mount', 'ptrace', 'init_module']) expect(denied, dangerous).to.include(dangerous);
    for (const name of ['rag', 'mcp']) {
      const pod = (deployment(name).spec as { template: { spec: Record<string, unknown> } }).template.spec;
      expect(pod.securityContext, name).to.deep.include({
        seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/svc-chromium.json' },
      });
      const shm = (pod.volumes as { name: string; emptyDir?: { medium?: string } }[]).find((v) => v.name === 'dshm');
      expect(shm?.emptyDir?.medium, name).to.equal('Memory');
    }
  });

  it('put the seccomp profile on every node with a DaemonSet holding the same bytes, and mount it read-only', () => {
    const file = readFileSync(join(ROOT, 'seccomp/svc-chromium.json'), 'utf8');
    const cm = manifests.find((m) => m.kind === 'ConfigMap' && (m.metadata as { name?: string }).name === 'svc-seccomp-profiles') as
      | { data: Record<string, string>; metadata: { namespace?: string } }
      | undefined;
    expect(cm?.data['svc-chromium.json']).to.equal(file);
    const ds = manifests.find((m) => m.kind === 'DaemonSet') as
      | {
          metadata: { namespace?: string };
          spec: { template: { metadata: { annotations: Record<string, string> }; spec: Record<string, unknown> } };
        }
      | undefined;
    if (!ds) throw new Error('no DaemonSet installs the profile');
    expect(ds.metadata.namespace).to.equal(cm?.metadata.namespace);
    expect(ds.spec.template.metadata.annotations['svc.example.com/profile-sha256']).to.equal(
      createHash('sha256').update(file).digest('hex'),
    );
    const volumes = ds.spec.template.spec.volumes as { name: string; hostPath?: { path: string } }[];
    // The kubelet's seccomp root plus the pods' localhostProfile (profiles/svc-chromium.json).
    expect(volumes.find((v) => v.hostPath)?.hostPath?.path).to.equal('/var/lib/kubelet/seccomp/profiles');
    const tolerations = ds.spec.template.spec.tolerations as { operator: string }[];
    expect(tolerations).to.deep.include({ operator: 'Exists' });
  });

  it('leave the replica count to the autoscaler where there is one', () => {
    for (const name of ['keys', 'rag']) expect((deployment(name).spec as Record<string, unknown>).replicas, name).to.equal(undefined);
    const bad = deployment('rag');
    (bad.spec as Record<string, unknown>).replicas = 2;
    const others = manifests.filter((m) => !(m.kind === 'Deployment' && (m.metadata as { name?: string }).name === 'rag'));
    expect(projectProblems([...others, bad], FACTS).join('\n')).to.match(
      /Deployment\/rag: sets replicas \(2\) beside its HorizontalPodAutoscaler/,
    );
  });

  const withConfig = (change: (data: Record<string, string>) => void): Manifest[] =>
    manifests.map((m) => {
      if (!(m.kind === 'ConfigMap' && (m.metadata as { name?: string }).name === 'svc-config')) return m;
      const copy = structuredClone(m) as Manifest & { data: Record<string, string> };
      change(copy.data);
      return copy;
    });

  it('send users to public addresses an Ingress serves, and refuse any unset', () => {
    const broken: [string, (d: Record<string, string>) => void, RegExp][] = [
      [
        'a host no Ingress serves',
        (d) => (d.PRICING_URL = 'https://svc.example.com/pricing'),
        /PRICING_URL \(https:\/\/svc.example.com\/pricing\): no Ingress routes/,
      ],
      ['unset', (d) => delete d.CONSOLE_PUBLIC_URL, /CONSOLE_PUBLIC_URL is not set/],
      [
        'the console face on the API host',
        (d) => (d.CONSOLE_PUBLIC_URL = 'https://api.svc.example.com'),
        /CONSOLE_PUBLIC_URL .* to console \(it goes to rag\)|CONSOLE_PUBLIC_URL .*: no Ingress routes/,
      ],
      [
        'SSO callbacks to the console host',
        (d) => (d.ACCOUNTS_PUBLIC_URL = 'https://console.svc.example.com'),
        /ACCOUNTS_PUBLIC_URL .* to accounts \(it goes to console\)/,
      ],
    ];
    for (const [what, change, expected] of broken) expect(projectProblems(withConfig(change), FACTS).join('\n'), what).to.match(expected);
  });

  it('stop without dropping requests: unready first, a drain that covers a capture, SIGKILL after the whole stop', () => {
    const edit = (name: string, change: (pod: Record<string, unknown>, env: { name: string; value: string }[]) => void) => {
      const bad = deployment(name);
      const pod = (bad.spec as { template: { spec: Record<string, unknown> } }).template.spec;
      const container = (pod.containers as { env?: { name: string; value: string }[] }[])[0]!;
      container.env ??= [];
      change(pod, container.env);
      const others = manifests.filter((m) => !(m.kind === 'Deployment' && (m.metadata as { name?: string }).name === name));
      return projectProblems([...others, bad], FACTS).join('\n');
    };
    expect(edit('rag', (pod) => (pod.terminationGracePeriodSeconds = 30))).to.match(
      /Deployment\/rag: terminationGracePeriodSeconds 30 < .*65 s/,
    );
    expect(
      edit('mcp', (_pod, env) => {
        const drain = env.find((e) => e.name === 'SHUTDOWN_DRAIN_MS');
        if (drain) drain.value = '10000';
      }),
    ).to.match(/Deployment\/mcp: SHUTDOWN_DRAIN_MS 10000 is shorter than its longest request \(30000 ms\)/);
    expect(
      projectProblems(
        withConfig((d) => delete d.SHUTDOWN_DELAY_MS),
        FACTS,
      ).join('\n'),
    ).to.match(/SHUTDOWN_DELAY_MS 0: the listener would close/);
  });

  it('create partitions enough for the largest autoscaler, in the ConfigMap and by default in production', () => {
    expect(
      projectProblems(
        withConfig((d) => (d.KAFKA_TOPIC_PARTITIONS = '3')),
        FACTS,
      ).join('\n'),
    ).to.match(/Deployment\/keys: 3 partitions per topic, fewer than its 10 replicas at most/);
    expect(
      projectProblems(
        withConfig((d) => delete d.KAFKA_TOPIC_PARTITIONS),
        FACTS,
      ),
    ).to.deep.equal([]);
  });

  it('schedule on a stock cluster: the applied directory mounts no claim, and every claim names its class', () => {
    const applied = read.filter((r) => relative(ROOT, r.file).split('/').length === 1).map((r) => r.manifest);
    for (const d of applied.filter((m) => m.kind === 'Deployment')) {
      const volumes = (d.spec as { template: { spec: { volumes?: { persistentVolumeClaim?: unknown }[] } } }).template.spec.volumes ?? [];
      expect(
        volumes.filter((v) => v.persistentVolumeClaim),
        describeManifest(d),
      ).to.deep.equal([]);
    }
    expect(applied.filter((m) => m.kind === 'PersistentVolumeClaim')).to.deep.equal([]);
    const claims = manifests.filter((m) => m.kind === 'PersistentVolumeClaim');
    expect(claims).to.have.length(1);
    const unnamed = claims.map((c) => {
      const copy = structuredClone(c);
      delete (copy.spec as Record<string, unknown>).storageClassName;
      return copy;
    });
    const others = manifests.filter((m) => m.kind !== 'PersistentVolumeClaim');
    expect(projectProblems([...others, ...unnamed], FACTS).join('\n')).to.match(
      /PersistentVolumeClaim\/svc-projects: names no storage class/,
    );
  });

  it('ask no ReadOnlyMany volume', () => {
    const claims = manifests.filter((m) => m.kind === 'PersistentVolumeClaim');
    for (const c of claims) expect((c.spec as { accessModes: string[] }).accessModes).not.to.include('ReadOnlyMany');
  });
});
