import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { pickOne } from '../faults/traffic.ts';

/** What one face answered while replicas were killed. */
export interface FaceFigures {
  /** Requests answered as expected (after retries where needed). */
  ok: number;
  /** Attempts retried: no answer, a 5xx, or a 429 with Retry-After. */
  retried: number;
  /** Requests with no good answer before their deadline: a loss from the client's side. */
  gaveUp: number;
  /** Requests whose final answer was neither a success nor one to retry (e.g. a 401 or 404 for a good key). */
  failed: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Load on the faces phase 4 of `npm run scale` does not drive through sign-ups and webhooks: POST
 * /validate (keys), a rag query, an MCP tool call, one at a time per face in a loop, each against a
 * replica picked per attempt and retried as a client would (no answer, 5xx, or 429 with Retry-After),
 * until `stop()` says the kills are over.
 */
export class FaceLoad {
  readonly figures: Record<'validate' | 'rag query' | 'mcp call', FaceFigures> = {
    validate: { ok: 0, retried: 0, gaveUp: 0, failed: 0 },
    'rag query': { ok: 0, retried: 0, gaveUp: 0, failed: 0 },
    'mcp call': { ok: 0, retried: 0, gaveUp: 0, failed: 0 },
  };

  readonly targets: { keys: readonly string[]; rag: readonly string[]; mcp: readonly string[] };
  readonly apiKey: string;
  readonly collectionName: string;

  constructor(targets: FaceLoad['targets'], apiKey: string, collectionName: string) {
    this.targets = targets;
    this.apiKey = apiKey;
    this.collectionName = collectionName;
  }

  async run(stop: () => boolean): Promise<void> {
    const loop = async (face: keyof FaceLoad['figures'], once: () => Promise<'ok' | 'retry' | 'failed'>) => {
      while (!stop()) {
        // A steady trickle, not a flood: the point is that every face keeps being asked through the kills.
        await sleep(200);
        const deadline = Date.now() + 120_000;
        for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
          const outcome = await once().catch(() => 'retry' as const);
          if (outcome === 'ok' || outcome === 'failed') {
            this.figures[face][outcome]++;
            break;
          }
          if (Date.now() > deadline) {
            this.figures[face].gaveUp++;
            break;
          }
          this.figures[face].retried++;
          await sleep(delay);
        }
      }
    };
    const expectOk = (status: number): 'ok' | 'retry' | 'failed' =>
      status === 200 ? 'ok' : status >= 500 || status === 429 ? 'retry' : 'failed';
    await Promise.all([
      loop('validate', async () => {
        const res = await fetch(`${pickOne(this.targets.keys)}/validate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ apiKey: this.apiKey }),
          signal: AbortSignal.timeout(10_000),
        });
        await res.arrayBuffer();
        return expectOk(res.status);
      }),
      loop('rag query', async () => {
        const res = await fetch(`${pickOne(this.targets.rag)}/api/rag/query`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': this.apiKey },
          body: JSON.stringify({ query: 'shipping cost', collectionName: this.collectionName, topK: 3 }),
          signal: AbortSignal.timeout(15_000),
        });
        await res.arrayBuffer();
        return expectOk(res.status);
      }),
      loop('mcp call', async () => {
        const client = new Client({ name: 'svc-scale', version: '1.0.0' });
        try {
          await client.connect(
            new StreamableHTTPClientTransport(new URL(`${pickOne(this.targets.mcp)}/mcp`), {
              requestInit: { headers: { 'x-api-key': this.apiKey }, signal: AbortSignal.timeout(15_000) },
            }),
          );
          const answer = (await client.callTool({
            name: 'rag_query',
            arguments: { collectionName: this.collectionName, query: 'order total', topK: 3 },
          })) as {
            isError?: boolean;
          };
          return answer.isError ? 'retry' : 'ok';
        } finally {
          await client.close().catch(() => undefined);
        }
      }),
    ]);
  }
}
