import { type AutocannonRequest, type AutocannonResult, autocannon, spreadOverConnections } from '../support/autocannon.ts';
import type { LoadFigures } from './load.ts';

/**
 * POST /validate as fast as `connections` keep-alive connections go, spread over the replicas'
 * URLs per connection (as a Service's kube-proxy balances: a connection stays on one pod), with
 * autocannon: its requests are encoded once and its parser is cheap, so on a 2-core machine the
 * client leaves the replicas most of the CPU. undici's `request` cost about a core at 7,000
 * requests a second, so a second replica could only share what the client left (0.77x and 0.95x
 * in the runs of 2026-11-28).
 *
 * A request counts as answered only with a 2xx whose body starts `{"valid":true,`; anything else
 * (another status, another body, an error, a timeout) is `failed`.
 */
export async function validateLoad(options: {
  urls: readonly string[];
  seconds: number;
  connections: number;
  apiKeys: readonly string[];
}): Promise<LoadFigures> {
  const { urls, seconds, connections, apiKeys } = options;
  if (urls.length === 0 || apiKeys.length === 0) throw new Error('validateLoad needs a URL and a key');
  const requests: AutocannonRequest[] = apiKeys.map((apiKey) => ({
    method: 'POST',
    path: '/validate',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiKey }),
  }));
  const latencies: number[] = [];
  const perUrl = urls.map((_url, i) => Math.floor(connections / urls.length) + (i < connections % urls.length ? 1 : 0));
  const started = performance.now();
  const results = await Promise.all(
    urls.map(
      (url, u) =>
        new Promise<AutocannonResult>((resolvePromise, reject) => {
          const instance = autocannon(
            {
              url,
              connections: perUrl[u]!,
              duration: seconds,
              timeout: 10,
              requests,
              setupClient: spreadOverConnections(requests, perUrl[u]!),
              verifyBody: (body) => body.startsWith('{"valid":true,'),
            },
            (error, result) => (error ? reject(error) : resolvePromise(result)),
          );
          instance.on('response', (_client, statusCode, _bytes, ms) => {
            if (statusCode >= 200 && statusCode <= 299) latencies.push(ms);
          });
        }),
    ),
  );
  const elapsed = (performance.now() - started) / 1000;
  let answered = 0;
  let failed = 0;
  for (const r of results) {
    const twoHundreds = Object.entries(r.statusCodeStats).reduce((n, [code, s]) => (code.startsWith('2') ? n + s.count : n), 0);
    answered += twoHundreds - r.mismatches;
    // autocannon counts a timeout among its errors too; a mismatch may be a non-2xx as well (then counted twice: failed only needs to be 0 or not).
    failed += r.non2xx + r.mismatches + r.errors;
  }
  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)] ?? Number.NaN;
  return { perSecond: answered / elapsed, p50: at(0.5), p99: at(0.99), failed };
}
