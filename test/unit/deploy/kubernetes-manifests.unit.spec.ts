import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import { schemaProblems, type Manifest } from './kubernetes-schema.ts';
import { projectProblems } from './manifest-rules.ts';
import { FACTS } from './project-facts.ts';

const ROOT = join(import.meta.dirname, '../../../deploy/kubernetes');

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
      ['one replica', (d) => (d.spec.replicas = 1), /Deployment\/keys: 1 replica\(s\)/],
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

  it('ask no ReadOnlyMany volume', () => {
    const claims = manifests.filter((m) => m.kind === 'PersistentVolumeClaim');
    for (const c of claims) expect((c.spec as { accessModes: string[] }).accessModes).not.to.include('ReadOnlyMany');
  });
});
