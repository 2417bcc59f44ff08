import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { pngHead, zeroPng } from '../integration/vision/bomb-png.ts';

/**
 * Hostile content, not only hostile requests: what a customer can put inside a well-formed request
 * to make the service spend without bound (ignore patterns that backtrack, paths that end comments
 * or reorder text, trees a thousand levels deep, images that inflate to gigabytes, batches of calls
 * that should each pay their way).
 */

/** Ignore lines that backtrack in a regex translation, and others at git's edges. */
export const ignorePattern: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: 5, max: 40 }).map((n) => `${'*a'.repeat(n)}*b`),
  fc.integer({ min: 3, max: 30 }).map((n) => `${'**/'.repeat(n)}x`),
  fc.integer({ min: 3, max: 30 }).map((n) => `${'[!a-z]*'.repeat(n)}q`),
  fc.constantFrom('[[:alpha:]', '\\', '!', '/', '**', '*', '!*', '[', '[]]', '\\ ', '#x'),
  // An array joined, not fc.string over a unit: that one's reverse mapping costs the fuzz process (which
  // hosts the services) hundreds of milliseconds, which the table then counted as slow answers.
  fc.array(fc.constantFrom('*', '?', 'a', '/', '[', ']', '!', '\\', '-'), { maxLength: 300 }).map((chars) => chars.join('')),
);

/** Paths whose Unicode ends a comment, reorders a line, or is simply very long or very deep. */
export const hostilePath: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'a\u2028process.exit(7)//.ts',
    'b\u2029process.exit(7)//.ts',
    'src/\u202eevil\u202c.ts',
    'src/\u2066isolate\u2069.ts',
    'c*/process.exit(7)/*.ts',
    'd\uFEFF.ts',
    'e\uD800.ts',
    `${'x'.repeat(1024)}`,
    `${'y'.repeat(1025)}`,
    `${'a'.repeat(110)}`,
  ),
  fc
    .array(fc.constantFrom('a', 'b', 'node_modules', '.git', 'dist', '\u2028'), { minLength: 50, maxLength: 400 })
    .map((segments) => `${segments.join('/')}/deep.ts`),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }),
);

/** A push: a hostile `.gitignore`, a name the patterns chew on, and hostile paths beside it. */
export const hostilePush: fc.Arbitrary<{ path: string; content: string }[]> = fc
  .tuple(
    fc.array(ignorePattern, { minLength: 1, maxLength: 30 }),
    fc.array(fc.record({ path: hostilePath, content: fc.string({ maxLength: 80 }) }), { maxLength: 15 }),
  )
  .map(([patterns, files]) => [
    { path: '.gitignore', content: patterns.join('\n') },
    { path: 'a'.repeat(110), content: 'export const a = 1;\n' },
    ...files,
  ]);

/** A JSON-RPC batch of `size` tools/call requests of the cheapest metered tool. */
export const rpcBatch = (collection: string): fc.Arbitrary<unknown[]> =>
  fc.integer({ min: 2, max: 150 }).map((size) =>
    Array.from({ length: size }, (_, id) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'rag_query', arguments: { query: 'cart', collectionName: collection } },
    })),
  );

/**
 * A site of images that inflate: a 10000×10000 PNG of a few hundred kilobytes, a header that claims
 * 100000×100000, an SVG that asks for a huge canvas, and a small honest PNG. Bound to loopback; the
 * fuzz target allow-lists it for captures and image fetches.
 */
export async function startBombSite(): Promise<{ url: string; host: string; paths: string[]; stop(): Promise<void> }> {
  const files = new Map<string, { type: string; body: Buffer }>([
    ['/bomb.png', { type: 'image/png', body: await zeroPng(10_000, 10_000) }],
    ['/claims-huge.png', { type: 'image/png', body: pngHead(100_000, 100_000) }],
    ['/ok.png', { type: 'image/png', body: await zeroPng(16, 16) }],
    [
      '/bomb.svg',
      {
        type: 'image/svg+xml',
        body: Buffer.from(
          `<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"><defs><pattern id="p" width="1" height="1" patternUnits="userSpaceOnUse"><rect width="1" height="1" fill="red"/></pattern></defs><rect width="100000" height="100000" fill="url(#p)"/></svg>`,
        ),
      },
    ],
  ]);
  const server: Server = createServer((req, res) => {
    const file = files.get((req.url ?? '/').split('?')[0] ?? '/');
    if (!file) res.writeHead(404).end();
    else res.writeHead(200, { 'content-type': file.type, 'content-length': file.body.length }).end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    paths: [...files.keys()],
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
