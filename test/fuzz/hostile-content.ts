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
 * E-mail addresses that look like one address and are another, or break what quotes them: bidi
 * overrides and isolates (an address that reads backwards in a page or a log), U+2028 / U+2029 (a line
 * end to JavaScript, not to JSON), zero-width and look-alike letters, header injection, lists, and
 * addresses past every length limit.
 */
export const hostileEmail: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'victim\u202e@moc.elpmaxe',
    'ceo@victim\u202e.example',
    'a\u2066b\u2069@example.test',
    'a\u2028b@example.test',
    'a@exa\u2029mple.test',
    'a\u200b@example.test',
    'a@example.test\u2028',
    '\u202eceo@example.test',
    'admin@\u0435xample.test',
    'ADMIN@EXAMPLE.TEST',
    ' admin@example.test ',
    'a@example.test\r\nBcc: v@example.test',
    'a@example.test\nX-Injected: 1',
    'a@example.test,b@example.test',
    'a@example.test; b@example.test',
    '"a b"@example.test',
    '"a\\"@example.test',
    'a@[127.0.0.1]',
    'a@localhost',
    'a@gmail.com',
    'a@b',
    '@example.test',
    'a@',
    'a@@example.test',
    'a\u0000@example.test',
    'a@xn--80ak6aa92e.com',
    `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.test`,
    `${'a'.repeat(65)}@example.test`,
    `a@${'d'.repeat(250)}.test`,
    `${'x'.repeat(5000)}@example.test`,
  ),
  fc
    .tuple(fc.constantFrom('\u202e', '\u2066', '\u2028', '\u2029', '\u200f', '\ufeff'), fc.uuid())
    .map(([mark, id]) => `fuzz-${id.slice(0, 8)}${mark}@example.test`),
);

/**
 * The same invitation many times over in one body: an array of up to 10,000 addresses (past the body
 * limit from about 3,000), each a fresh address, so a route that took a list would try to pass the
 * workspace's 100-member cap at once.
 */
export const invitationFlood: fc.Arbitrary<string[]> = fc
  .constantFrom(101, 150, 1_000, 3_000, 10_000)
  .map((n) => Array.from({ length: n }, (_, i) => `flood-${i}@example.test`));

/**
 * Where a log-in may go on to (the console's `next`): other origins in every spelling a browser
 * accepts, control characters the URL parser drops, and values at and far past the 2 KiB limit.
 */
export const hostileNext: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '/account',
    '/team',
    '/team/join?token=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    '//evil.example',
    '///evil.example',
    '/\\evil.example',
    '/\\/evil.example',
    '/\t/evil.example',
    '/\n/evil.example',
    '/ /evil.example',
    '/%2F%2Fevil.example',
    '/%5Cevil.example',
    '/..//evil.example',
    '/./..//evil.example',
    'https://evil.example/',
    'javascript:alert(1)',
    'data:text/html,x',
    '/\u2028//evil.example',
    '/\u202e/evil.example',
    '/\u0000',
    '/#//evil.example',
    '/?next=//evil.example',
    '',
    '/',
  ),
  fc.constantFrom(2_046, 2_047, 2_048, 2_049, 8_000, 15_000, 100_000).map((n) => `/${'a'.repeat(n - 1)}`),
  fc.constantFrom(2_048, 20_000).map((n) => `//${'e'.repeat(n)}.example`),
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
