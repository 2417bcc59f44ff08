import { createRequire } from 'node:module';

/** What svc's load generators use of autocannon's API (it ships no types): bench/validate.ts and npm run scale. */
export interface AutocannonRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}
export interface AutocannonClient {
  setRequests(requests: AutocannonRequest[]): void;
}
export interface AutocannonResult {
  requests: { mean: number; total: number };
  non2xx: number;
  mismatches: number;
  /** Timeouts included. */
  errors: number;
  timeouts: number;
  statusCodeStats: Record<string, { count: number }>;
}
export interface AutocannonInstance {
  on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): void;
}
export type Autocannon = (
  opts: {
    url: string;
    connections: number;
    duration: number;
    requests: AutocannonRequest[];
    overallRate?: number;
    setupClient: (client: AutocannonClient) => void;
    verifyBody: (body: string) => boolean;
    timeout: number;
  },
  done: (error: Error | null, result: AutocannonResult) => void,
) => AutocannonInstance;

export const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/**
 * A setupClient that starts each of `connections` connections at its own place in `requests`, so
 * concurrent requests name different keys. The requests are built once (a setupRequest hook would
 * rebuild each one per send and cost the load generator ~25%).
 */
export function spreadOverConnections(requests: AutocannonRequest[], connections: number): (client: AutocannonClient) => void {
  let clients = 0;
  return (client) => {
    const from = Math.floor(((clients++ % connections) * requests.length) / connections);
    client.setRequests([...requests.slice(from), ...requests.slice(0, from)]);
  };
}
