/**
 * `npm run play`: deploy/kubernetes as shipped, executed by `podman kube play` against the local Kafka,
 * PostgreSQL + pgvector, FerretDB and Mailpit, then the production flow through the pods.
 *
 * The overlay (overlay.ts) changes only what a cluster provides: the servers' addresses and the broker's
 * security (the local Kafka is plaintext), the Secrets, and the replica count an autoscaler would set
 * (its minimum). Services become DNS names on the pods' network carrying their pods' addresses (a
 * Service's port is its pods' port in every file here, checked); Ingress, NetworkPolicy, HPA, PDB and the
 * seccomp DaemonSet are not run by kube play (test/unit/deploy checks them by rules), and the DaemonSet's
 * work is done by handing its ConfigMap's profile to kube play's --seccomp-profile-root.
 *
 *   npm run play            build the image if missing, play, check, tear down
 *   npm run play -- --keep  leave the pods and the stack running (Ctrl-C stops them)
 */
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Stack } from '../../deploy/local/stack.ts';
import { keysMailedTo } from '../support/mailpit.ts';
import { deliver, subscriptionPayload } from '../support/lemonsqueezy.ts';
import { bringUp, podman, say, until, type Pod } from './cluster.ts';
import type { Played } from './overlay.ts';

const keep = process.argv.includes('--keep');

async function main(): Promise<number> {
  const cluster = await bringUp();
  try {
    const { pods, played, stack } = cluster;
    await productionFlow(pods, played, stack);
    await securityContextHolds(pods);
    say(
      `image ${cluster.built}: ${(cluster.size / 1e6).toFixed(0)} MB; ${pods.length} pods ready in ${cluster.slowestReadyS.toFixed(1)} s`,
    );
    say('PASSED');
    if (keep) {
      say('--keep: pods and stack stay up; Ctrl-C to stop them');
      await new Promise((r) => process.once('SIGINT', r));
    }
    return 0;
  } finally {
    await cluster.down();
  }
}

const of = (pods: readonly Pod[], deployment: string): Pod[] => pods.filter((p) => p.deployment === deployment);

/** Sign-up, a signed webhook, the key by e-mail, a gated rag query, an MCP call, a capture in the rag pod. */
async function productionFlow(pods: readonly Pod[], played: Played, stack: Stack): Promise<void> {
  const [accounts, webhooks, rag, mcp] = ['accounts', 'webhooks', 'rag', 'mcp'].map((d) => of(pods, d));
  if (!accounts?.[0] || !webhooks?.[0] || !rag?.[0] || !mcp?.[0]) throw new Error('a face has no pod');
  const email = `play-${randomUUID()}@example.test`;
  const signup = await fetch(`http://${accounts[0].ip}:8081/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: `pw-${randomUUID()}`, name: 'Play' }),
  });
  const account = (await signup.json()) as { user?: { id: string } };
  if (signup.status !== 201 || !account.user) throw new Error(`sign-up answered ${signup.status}: ${JSON.stringify(account)}`);
  say(`sign-up through ${accounts[0].name}: 201, account ${account.user.id}`);

  // A live (not test-mode) subscription for that account, signed with the Secret's signing secret.
  const payload = subscriptionPayload('subscription_created', {
    subscriptionId: String(Date.now()),
    userId: account.user.id,
    attributes: { user_email: email, variant_id: played.proVariant, test_mode: false },
    meta: { test_mode: false },
  });
  const webhook = await deliver(`http://${webhooks.at(-1)?.ip}:8083`, played.secrets.PAYMENT_WEBHOOK_SECRET, payload);
  if (webhook.status !== 200) throw new Error(`signed webhook answered ${webhook.status}`);
  say(`signed webhook through ${webhooks.at(-1)?.name}: 200`);
  const key = await until('the key by e-mail', async () => (await keysMailedTo(stack.env.MAILPIT_URL, email))[0], 120_000);
  say(`key mailed to ${email} (via the mailer pods), ${key.length} characters long (not printed: a key is a secret)`);

  const call = async (pod: Pod, path: string, body: unknown) => {
    const res = await fetch(`http://${pod.ip}:8084${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(150_000),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const refused = await fetch(`http://${rag[0].ip}:8084/api/rag/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ collectionName: 'play', query: 'x' }),
  });
  if (refused.status !== 401) throw new Error(`an unkeyed query answered ${refused.status}, not 401`);
  const setup = await call(rag[0], '/api/rag/setup', { collectionName: 'play' });
  if (setup.status !== 200) throw new Error(`setup answered ${setup.status}: ${JSON.stringify(setup.body)}`);
  const files = [
    { path: 'shipping.ts', content: 'export function shippingCost(weightKg: number): number {\n  return 4.5 + weightKg * 1.2;\n}\n' },
    { path: 'tax.ts', content: 'export const vatRate = (country: string) => (country === "DE" ? 0.19 : 0.2);\n' },
  ];
  const index = await call(rag.at(-1) ?? rag[0], '/api/rag/index', { collectionName: 'play', files, wait: true });
  if (index.status !== 200 || index.body.status !== 'completed')
    throw new Error(`index answered ${index.status}: ${JSON.stringify(index.body)}`);
  say(
    `pushed sources indexed by the indexer pods into PostgreSQL: ${JSON.stringify({ filesIndexed: index.body.filesIndexed, chunks: index.body.chunks })}`,
  );
  const query = await call(rag[0], '/api/rag/query', { collectionName: 'play', query: 'how much does shipping cost', topK: 3 });
  const hits = JSON.stringify(query.body);
  if (query.status !== 200 || !hits.includes('shipping.ts')) throw new Error(`query answered ${query.status}: ${hits.slice(0, 400)}`);
  say(`gated rag query through ${rag[0].name} (key checked at the keys Service): 200, shipping.ts found`);

  const client = new Client({ name: 'svc-play', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`http://${mcp[0].ip}:8085/mcp`), { requestInit: { headers: { 'x-api-key': key } } }),
  );
  try {
    const answer = (await client.callTool({
      name: 'rag_query',
      arguments: { collectionName: 'play', query: 'value added tax rate', topK: 3 },
    })) as {
      isError?: boolean;
      structuredContent?: unknown;
    };
    if (answer.isError || !JSON.stringify(answer.structuredContent).includes('tax.ts'))
      throw new Error(`MCP rag_query: ${JSON.stringify(answer).slice(0, 400)}`);
    say(`MCP call rag_query through ${mcp[0].name}: tax.ts found`);
  } finally {
    await client.close();
  }

  // A page of the cluster's own (the console's login page, at its Service), captured by Chromium in the
  // rag pod under the pod's securityContext (uid 1000, no capabilities, read-only root, the seccomp profile).
  const capture = await call(rag[0], '/api/glm/capture', { url: played.captureUrl });
  if (capture.status !== 200) throw new Error(`capture answered ${capture.status}: ${JSON.stringify(capture.body).slice(0, 400)}`);
  say(`page capture of ${played.captureUrl} in ${rag[0].name}: 200 ${JSON.stringify(capture.body).slice(0, 160)}`);
}

/** What the rag pod runs under, read from inside it and from podman. */
async function securityContextHolds(pods: readonly Pod[]): Promise<void> {
  const rag = of(pods, 'rag')[0];
  if (!rag) throw new Error('no rag pod');
  const container = `${rag.name}-svc`;
  const inside = await podman(
    'exec',
    container,
    '/usr/local/bin/node',
    '-e',
    `const fs = require('node:fs');
     const status = fs.readFileSync('/proc/self/status', 'utf8');
     let rootWrite = 'allowed';
     try { fs.writeFileSync('/app/probe', 'x'); } catch (e) { rootWrite = e.code; }
     console.log(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), rootWrite,
       capEff: /CapEff:\\s*(\\w+)/.exec(status)[1], noNewPrivs: /NoNewPrivs:\\s*(\\d)/.exec(status)[1], seccomp: /Seccomp:\\s*(\\d)/.exec(status)[1] }));`,
  );
  const facts = JSON.parse(inside) as { uid: number; rootWrite: string; capEff: string; noNewPrivs: string; seccomp: string };
  // keyctl: allowed by podman's default profile (EINVAL for a bad call), refused by svc-chromium.json (EPERM).
  const keyctl = await podman('exec', container, '/usr/bin/perl', '-e', 'syscall(250, 0, 0, 0, 0, 0); print 0 + $!');
  const userns = await podman('exec', container, '/usr/bin/unshare', '-U', '/bin/true').then(
    () => 'allowed',
    () => 'refused',
  );
  say(
    `rag pod: ${JSON.stringify(facts)}; keyctl errno ${keyctl} (1 = EPERM: the svc-chromium profile is in force); user namespaces ${userns}`,
  );
  if (keyctl !== '1') throw new Error('the rag pod does not run under svc-chromium.json');
  if (userns !== 'allowed') throw new Error("the rag pod's profile refuses user namespaces: Chromium's sandbox cannot start");
  if (
    facts.uid !== 1000 ||
    facts.rootWrite !== 'EROFS' ||
    facts.capEff !== '0000000000000000' ||
    facts.noNewPrivs !== '1' ||
    facts.seccomp !== '2'
  )
    throw new Error(`the rag pod does not run under the manifest's securityContext: ${inside}`);
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[play] FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
