/**
 * Customer A of `npm run noisy`, on a thread of its own: A's client (building 10 MB pushes, reading
 * answers) and A's bomb site must not share an event loop with B's client, or B's measured latency
 * would include A's client work, which no server could remove. A real attacker is another machine;
 * here it is another thread of the same two cores, as hungry as any.
 *
 * A's requests leave from 127.0.0.2, B's from 127.0.0.1: customers on other machines, so A's flood
 * spends A's address's per-IP budget, not B's.
 *
 * Protocol with noisy-neighbour.ts: the thread starts the bomb site and posts `{ site }`; on
 * `{ attack }` it sends A's worst inputs for `seconds` with `concurrency` requests in flight and
 * posts `{ statuses, unanswered }`; on `{ stop }` it closes the site and exits.
 */
import { Agent, request } from 'node:http';
import { parentPort } from 'node:worker_threads';
import fc from 'fast-check';
import { hostilePush, rpcBatch, startBombSite } from '../fuzz/hostile-content.ts';

export interface AttackOrder {
  readonly ragUrl: string;
  readonly mcpUrl: string;
  readonly apiKey: string;
  /** A's own folder collection, and B's folder A tries to set up as its own. */
  readonly collection: string;
  readonly othersFolder: string;
  readonly seconds: number;
  readonly concurrency: number;
  /** Only these kinds (NOISY_ATTACKS), else all. */
  readonly only?: readonly string[];
}

export type AttackerMessage =
  | { readonly site: { readonly url: string; readonly host: string } }
  | { readonly statuses: ReadonlyArray<readonly [string, number]>; readonly unanswered: number };

export type AttackerCommand = { readonly attack: AttackOrder } | { readonly stop: true };

const A_ADDRESS = '127.0.0.2';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
if (process.env.NOISY_A_NICE) setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), Number(process.env.NOISY_A_NICE));
const port = parentPort;
if (port === null) throw new Error('noisy-attacker.ts runs as a worker thread of noisy-neighbour.ts');

const bombs = await startBombSite();
port.postMessage({ site: { url: bombs.url, host: bombs.host } } satisfies AttackerMessage);

port.on('message', (command: AttackerCommand) => {
  if ('stop' in command) {
    void bombs.stop().finally(() => port.close());
    return;
  }
  void attack(command.attack).then((result) => port.postMessage(result satisfies AttackerMessage));
});

async function attack(order: AttackOrder): Promise<AttackerMessage> {
  const agent = new Agent({ keepAlive: true, maxSockets: order.concurrency });
  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    new Promise<number>((resolve, reject) => {
      const payload = Buffer.from(JSON.stringify(body));
      const req = request(
        url,
        {
          method: 'POST',
          agent,
          localAddress: A_ADDRESS,
          timeout: 60_000,
          headers: { 'content-type': 'application/json', 'content-length': payload.length, 'x-api-key': order.apiKey, ...headers },
        },
        (res) => {
          res.resume();
          res.once('end', () => resolve(res.statusCode ?? 0));
          res.once('error', reject);
        },
      );
      req.once('timeout', () => req.destroy(new Error('no answer in 60 s')));
      req.once('error', reject);
      req.end(payload);
    });
  const rag = (path: string, body: unknown) => post(`${order.ragUrl}${path}`, body);
  const pushes = fc.sample(hostilePush, { numRuns: 200, seed: 23 });
  const batches = fc.sample(rpcBatch(order.collection), { numRuns: 50, seed: 23 });
  const bombPaths = ['/bomb.png', '/claims-huge.png', '/bomb.svg'];
  let attacks: Array<[string, (i: number) => Promise<number>]> = [
    ['push', (i) => rag('/api/rag/index', { collectionName: order.collection, files: pushes[i % pushes.length] })],
    ['analyze-bomb', (i) => rag('/api/glm/analyze', { screenshotUrl: `${bombs.url}${bombPaths[i % 3]}`, analysisType: 'visual-bugs' })],
    ['capture-svg', () => rag('/api/glm/capture', { url: `${bombs.url}/bomb.svg`, fullPage: true })],
    ['mcp-batch', (i) => post(`${order.mcpUrl}/mcp`, batches[i % batches.length], { accept: 'application/json, text/event-stream' })],
    ['others-folder', () => rag('/api/rag/setup', { projectPath: order.othersFolder, collectionName: 'stolen' })],
  ];
  if (order.only) attacks = attacks.filter(([kind]) => order.only?.includes(kind));
  const statuses = new Map<string, number>();
  const count = (key: string) => statuses.set(key, (statuses.get(key) ?? 0) + 1);
  let unanswered = 0;
  const until = performance.now() + order.seconds * 1000;
  const attacker = async (worker: number) => {
    for (let i = worker; performance.now() < until; i += order.concurrency) {
      const [kind, send] = attacks[i % attacks.length] as [string, (i: number) => Promise<number>];
      try {
        count(`${kind} ${await send(i)}`);
      } catch {
        unanswered++;
        count(`${kind} unanswered`);
      }
    }
  };
  await Promise.all(Array.from({ length: order.concurrency }, (_, w) => attacker(w)));
  agent.destroy();
  return { statuses: [...statuses], unanswered };
}
