import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import type { Framing, RawRequest } from './raw-http.ts';

/**
 * The fast-check arbitraries of the fuzz suite. Bodies are built as JSON *text* from entries, so a
 * body can hold what JSON.stringify cannot produce from an object: duplicated keys, `__proto__` as
 * an own key, lone surrogates, numbers out of range, deep nesting past any recursion limit.
 */

/** A JSON value as text. */
export type JsonText = string;

/** One field of a body: its name and its value as JSON text. */
export type Entry = [string, JsonText];

/** What an endpoint's valid requests look like: each field with an arbitrary of valid values. */
export type Template = Record<string, fc.Arbitrary<JsonText>>;

export const json = (value: unknown): JsonText => JSON.stringify(value);
export const jsonOf = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<JsonText> => arb.map((v) => JSON.stringify(v) ?? 'null');

const LONE_SURROGATES = ['\\ud800', '\\udfff', '\\ud83d', 'a\\udc00b', '\\ud800\\ud800', '\\udbff\\udfff\\udbff'];

/** Strings that have broken parsers, databases, loggers and path handling before. */
export const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'null',
  'undefined',
  'NaN',
  '-1',
  '0x10',
  '../../../../etc/passwd',
  '/etc/passwd',
  '..\\..\\windows\\win.ini',
  '%00',
  '%2e%2e%2f',
  '${jndi:ldap://x}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  "'; DROP TABLE users; --",
  '$where',
  '$gt',
  'a'.repeat(257),
  '\u202e\u0645\u0631\u062d\u0628\u0627',
  'Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d',
  '\ufeffbom',
  'e\u0301',
  '\ud83d\ude00\ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67',
  'x@y',
  'a@b.c',
  '@',
  'http://127.0.0.1:1/',
  'file:///etc/passwd',
  'javascript:alert(1)',
  `svc_${'Z'.repeat(33)}`,
  'Bearer ',
  'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
];

const OPERATOR_OBJECTS = [
  '{"$gt":""}',
  '{"$ne":null}',
  '{"$ne":""}',
  '{"$exists":true}',
  '{"$regex":".*"}',
  '{"$regex":"(a+)+$"}',
  '{"$where":"sleep(5000) || true"}',
  '{"$in":["a","b"]}',
  '{"$nin":[]}',
  '{"$expr":{"$eq":[1,1]}}',
  '{"$function":{"body":"return true","args":[],"lang":"js"}}',
  '{"$or":[{"a":1},{"b":{"$gt":""}}]}',
  '{"$gt":"","$lt":"~"}',
  '{"$elemMatch":{"$gt":0}}',
  '{"$size":0}',
  '{"$type":2}',
];

const PROTO_OBJECTS = [
  '{"__proto__":{"admin":true,"tier":"team","valid":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '{"__proto__":null}',
  '{"__proto__":[]}',
  '{"__proto__":"x"}',
  '{"toString":"x","valueOf":1,"hasOwnProperty":null}',
];

/** Numbers JSON allows but code rarely expects. */
const ODD_NUMBERS = [
  '0',
  '-0',
  '1e309',
  '-1e309',
  '1e-400',
  '9007199254740993',
  '123456789012345678901234567890',
  '0.1',
  '-1',
  '2147483648',
  '1.5',
  '1E2',
];

export const hugeString: fc.Arbitrary<JsonText> = fc
  .tuple(fc.constantFrom('a', 'é', '\\ud800', '\\"', '\\u0000', 'ab1 ', '\ud83d\ude00'), fc.integer({ min: 5_000, max: 90_000 }))
  .map(([unit, n]) => `"${unit.repeat(Math.ceil(n / unit.length))}"`);

export const deepNesting: fc.Arbitrary<JsonText> = fc
  .tuple(fc.constantFrom('array', 'object', 'mixed', 'proto'), fc.integer({ min: 1_000, max: 12_000 }))
  .map(([kind, depth]) => {
    if (kind === 'array') return `${'['.repeat(depth)}1${']'.repeat(depth)}`;
    if (kind === 'object') return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    if (kind === 'proto') return `${'{"__proto__":'.repeat(depth)}{}${'}'.repeat(depth)}`;
    return `${'[{"$gt":'.repeat(depth)}""${'}]'.repeat(depth)}`;
  });

const unicodeString: fc.Arbitrary<JsonText> = fc.oneof(
  jsonOf(fc.string({ unit: 'binary', maxLength: 40 })),
  jsonOf(fc.string({ unit: 'grapheme', maxLength: 40 })),
  fc
    .tuple(fc.string({ unit: 'grapheme-ascii', maxLength: 10 }), fc.constantFrom(...LONE_SURROGATES))
    .map(([s, lone]) => `"${s.replace(/["\\]/g, '')}${lone}"`),
);

/** A value of the wrong kind, or of the right kind with a content nobody planned for. */
export const nastyValue: fc.Arbitrary<JsonText> = fc.oneof(
  { arbitrary: jsonOf(fc.jsonValue({ maxDepth: 3 })), weight: 6 },
  { arbitrary: fc.constantFrom(...NASTY_STRINGS).map(json), weight: 5 },
  { arbitrary: unicodeString, weight: 4 },
  { arbitrary: fc.constantFrom(...OPERATOR_OBJECTS), weight: 4 },
  { arbitrary: fc.constantFrom(...PROTO_OBJECTS), weight: 2 },
  { arbitrary: fc.constantFrom(...ODD_NUMBERS), weight: 3 },
  { arbitrary: fc.constantFrom('true', 'false', 'null', '[]', '{}', '[null]', '[[]]', '""'), weight: 3 },
  { arbitrary: hugeString, weight: 1 },
  { arbitrary: deepNesting, weight: 1 },
);

/** Field names besides the template's: prototype keys, operators, near-misses. */
const extraKey = fc.oneof(
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    '$where',
    '$gt',
    '$set',
    'tier',
    'admin',
    'valid',
    'userId',
    '_id',
    'status',
    '',
  ),
  fc.string({ unit: 'grapheme-ascii', maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
);

export const objectText = (entries: readonly Entry[]): JsonText => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;

/**
 * A body close to a valid one: each field kept valid, replaced by a nasty value, dropped or
 * duplicated; sometimes extra keys. With `valid`, exactly the template.
 */
export function templateBody(template: Template): fc.Arbitrary<Entry[]> {
  const names = Object.keys(template);
  const field = (name: string) =>
    fc.oneof(
      { arbitrary: template[name]!.map((v): Entry[] => [[name, v]]), weight: 12 },
      { arbitrary: nastyValue.map((v): Entry[] => [[name, v]]), weight: 5 },
      { arbitrary: fc.constant<Entry[]>([]), weight: 2 },
      {
        arbitrary: fc.tuple(template[name]!, nastyValue).map(([a, b]): Entry[] => [
          [name, a],
          [name, b],
        ]),
        weight: 1,
      },
      {
        arbitrary: fc.tuple(nastyValue, template[name]!).map(([a, b]): Entry[] => [
          [name, a],
          [name, b],
        ]),
        weight: 1,
      },
    );
  return fc
    .tuple(fc.tuple(...names.map(field)), fc.array(fc.tuple(extraKey, nastyValue), { maxLength: 3 }), fc.nat(3))
    .map(([fields, extras, at]) => {
      const entries = fields.flat();
      entries.splice(Math.min(at, entries.length), 0, ...extras);
      return entries;
    });
}

export const validBody = (template: Template): fc.Arbitrary<Entry[]> =>
  fc.tuple(...Object.keys(template).map((name) => template[name]!.map((v): Entry => [name, v])));

/** Text that is not JSON, or not quite. */
export const badJson = (template: Template): fc.Arbitrary<string> =>
  fc.oneof(
    validBody(template).map((entries) => {
      const text = objectText(entries);
      return text.slice(0, Math.max(1, text.length >> 1));
    }),
    validBody(template).map((entries) => `${objectText(entries)},`),
    validBody(template).map((entries) => `${objectText(entries)}{}`),
    validBody(template).map((entries) => objectText(entries).replaceAll('"', "'")),
    validBody(template).map((entries) => `\ufeff${objectText(entries)}`),
    validBody(template).map((entries) => `/* c */${objectText(entries)}`),
    fc.constantFrom(
      '{',
      '}',
      '[',
      '{"a":}',
      '{"a" 1}',
      '{a:1}',
      'NaN',
      'Infinity',
      '-',
      'undefined',
      '{"a":1,}',
      '[1,]',
      '"\\x41"',
      '"\\u12"',
      '\u0000',
      'tru',
      '{"a":"\n"}',
      '0x1',
    ),
    fc.string({ unit: 'binary', maxLength: 60 }),
  );

export type BodyKind = 'template' | 'valid' | 'value' | 'bad-json' | 'empty' | 'bytes' | 'form' | 'oversize' | 'bad-form' | 'many-fields';

export interface BodyDraft {
  kind: BodyKind;
  bytes: Buffer;
}

export const invalidUtf8 = fc.constantFrom(
  Buffer.from([0xff, 0xfe, 0xfd]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xf4, 0x90, 0x80, 0x80]),
  Buffer.from('{"email":"\xff\xfe@x.y","password":"\xc3"}', 'latin1'),
);

/** A body for an endpoint with this template, within or beyond `limitBytes`. */
export function bodyArb(template: Template, limitBytes: number): fc.Arbitrary<BodyDraft> {
  const utf8 =
    (kind: BodyKind) =>
    (text: string): BodyDraft => ({ kind, bytes: Buffer.from(text, 'utf8') });
  return fc.oneof(
    { arbitrary: templateBody(template).map(objectText).map(utf8('template')), weight: 40 },
    { arbitrary: validBody(template).map(objectText).map(utf8('valid')), weight: 14 },
    { arbitrary: nastyValue.map(utf8('value')), weight: 10 },
    { arbitrary: badJson(template).map(utf8('bad-json')), weight: 10 },
    { arbitrary: fc.constant(utf8('empty')('')), weight: 4 },
    {
      arbitrary: fc
        .oneof(
          fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
          invalidUtf8,
        )
        .map((bytes): BodyDraft => ({ kind: 'bytes', bytes })),
      weight: 4,
    },
    {
      arbitrary: validBody(template)
        .map((entries) => entries.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&'))
        .map(utf8('form')),
      weight: 3,
    },
    {
      arbitrary: fc.tuple(fc.integer({ min: 1, max: 3 }), fc.constantFrom('a', '[', ' ')).map(
        ([times, unit]): BodyDraft => ({
          kind: 'oversize',
          bytes: Buffer.from(`{"a":"${unit.repeat(limitBytes * times + 1024)}"}`, 'utf8'),
        }),
      ),
      weight: 1,
    },
  );
}

/** How the body's bytes are labelled and encoded. */
export interface Encoding {
  contentType: string | undefined;
  /** A second Content-Type header. */
  secondContentType: string | undefined;
  contentEncoding: string | undefined;
  transform: 'none' | 'gzip' | 'garbage-gzip' | 'utf16';
}

const JSON_TYPE = 'application/json';

export const encodingArb: fc.Arbitrary<Encoding> = fc.oneof(
  {
    arbitrary: fc.constant<Encoding>({
      contentType: JSON_TYPE,
      secondContentType: undefined,
      contentEncoding: undefined,
      transform: 'none',
    }),
    weight: 30,
  },
  {
    arbitrary: fc
      .constantFrom(
        undefined,
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=utf-8',
        'application/json; charset=latin1',
        'application/json; charset=klingon',
        'application/json; charset=',
        'application/vnd.api+json',
        'APPLICATION/JSON',
        'application/json;;;',
        'application/jsonp',
        'application/octet-stream',
        '*/*',
        '',
        'json',
        'application/json, text/plain',
        'application/json\u00ff',
      )
      .map((contentType): Encoding => ({ contentType, secondContentType: undefined, contentEncoding: undefined, transform: 'none' })),
    weight: 8,
  },
  {
    arbitrary: fc
      .constantFrom('text/plain', JSON_TYPE, 'application/xml')
      .map((second): Encoding => ({ contentType: JSON_TYPE, secondContentType: second, contentEncoding: undefined, transform: 'none' })),
    weight: 2,
  },
  {
    arbitrary: fc
      .constantFrom<[string, Encoding['transform']]>(
        ['gzip', 'gzip'],
        ['gzip', 'garbage-gzip'],
        ['deflate', 'garbage-gzip'],
        ['br', 'none'],
        ['identity', 'none'],
        ['compress', 'none'],
        ['gzip, gzip', 'gzip'],
        ['x-unknown', 'none'],
      )
      .map(
        ([contentEncoding, transform]): Encoding => ({ contentType: JSON_TYPE, secondContentType: undefined, contentEncoding, transform }),
      ),
    weight: 3,
  },
  {
    arbitrary: fc.constant<Encoding>({
      contentType: 'application/json; charset=utf-16',
      secondContentType: undefined,
      contentEncoding: undefined,
      transform: 'utf16',
    }),
    weight: 1,
  },
);

export function encodeBody(bytes: Buffer, encoding: Encoding): Buffer {
  switch (encoding.transform) {
    case 'gzip':
      return gzipSync(bytes);
    case 'garbage-gzip':
      return Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), bytes.subarray(0, 64)]);
    case 'utf16':
      return Buffer.from(bytes.toString('utf8'), 'utf16le');
    case 'none':
      return bytes;
  }
}

export const framingArb: fc.Arbitrary<Framing> = fc.oneof(
  { arbitrary: fc.constant<Framing>('length'), weight: 40 },
  { arbitrary: fc.constant<Framing>('chunked'), weight: 5 },
  { arbitrary: fc.constantFrom<Framing>('none', 'short', 'long', 'both', 'two-lengths'), weight: 3 },
);

/** Headers besides authentication and framing, some of them malformed or duplicated. */
export const noiseHeaders: fc.Arbitrary<[string, string][]> = fc.array(
  fc.oneof(
    fc.tuple(
      fc.constant('X-Forwarded-For'),
      fc.oneof(
        fc.ipV4(),
        fc.ipV6(),
        fc.constantFrom(
          '',
          ',',
          'unknown',
          '1.2.3.4, 5.6.7.8, 127.0.0.1',
          '::ffff:127.0.0.1',
          '999.999.999.999',
          '[::1]:80',
          'a'.repeat(4000),
          '\u00ff\u00fe',
        ),
        fc.array(fc.ipV4(), { maxLength: 60 }).map((ips) => ips.join(', ')),
      ),
    ),
    fc.tuple(
      fc.constant('X-Request-Id'),
      fc.oneof(fc.string({ unit: 'grapheme-ascii', maxLength: 200 }), fc.constantFrom('', 'a'.repeat(129), '../x', '\u00e9')),
    ),
    fc.tuple(
      fc.constantFrom('Accept'),
      fc.constantFrom(
        'application/json, text/event-stream',
        '*/*',
        'text/event-stream',
        'text/html',
        '',
        'application/json;q=0',
        'garbage/',
      ),
    ),
    fc.tuple(fc.constant('Origin'), fc.constantFrom('https://evil.example', 'null', 'http://localhost:3000', '')),
    fc.tuple(fc.constant('Cookie'), fc.string({ unit: 'grapheme-ascii', maxLength: 100 })),
    fc.tuple(
      fc.constantFrom('Mcp-Session-Id', 'Mcp-Protocol-Version', 'Last-Event-ID'),
      fc.constantFrom('', '2025-03-26', '2025-06-18', '1999-01-01', 'x'.repeat(300), '\u0001'),
    ),
    fc.tuple(fc.constant('Expect'), fc.constantFrom('100-continue', 'garbage')),
    fc.tuple(fc.constantFrom('Range', 'If-None-Match', 'If-Modified-Since'), fc.constantFrom('bytes=0-1', 'bytes=-1', '*', 'yesterday')),
    fc.tuple(fc.constant('User-Agent'), fc.oneof(fc.string({ unit: 'grapheme-ascii', maxLength: 50 }), fc.constant('u'.repeat(9000)))),
    fc.tuple(
      fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,20}$/),
      fc.string({ unit: 'grapheme-ascii', maxLength: 60 }).map((s) => s.replace(/[\r\n]/g, '')),
    ),
    // Malformed: no name, bad bytes, a value past the server's header size limit.
    fc.tuple(fc.constantFrom('', 'Bad Header', 'X-Nul\u0000', 'X\u00e9'), fc.constant('x')),
    fc.tuple(fc.constant('X-Ctl'), fc.constantFrom('a\u0000b', 'a\u0007b', '\u00ff')),
    fc.tuple(fc.constant('X-Huge'), fc.constant('h'.repeat(20_000))),
  ),
  { maxLength: 4 },
);

/** Request targets around `path`: the path itself mostly, else variants with odd queries and encodings. */
export function targetArb(path: string): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constant(path), weight: 30 },
    {
      arbitrary: fc
        .constantFrom(
          '?a=1',
          '?__proto__[admin]=1',
          '?constructor[prototype][x]=1',
          '?a[$gt]=',
          '?%zz',
          '?a=%E0%A4%A',
          `?${'q'.repeat(5000)}=1`,
          '?apiKey=x&apiKey=y',
          '#frag',
          '?',
        )
        .map((q) => `${path}${q}`),
      weight: 4,
    },
    {
      arbitrary: fc.constantFrom(
        `${path}/`,
        `/${path}`,
        path.toUpperCase(),
        `${path}%2f`,
        `${path}/..`,
        `${path}/%2e%2e`,
        `${path}%00`,
        `${path}/%E0%A4%A`,
        '*',
        `http://127.0.0.1${path}`,
      ),
      weight: 3,
    },
  );
}

/** Usually the endpoint's method; sometimes another, or none that exists. */
export function methodArb(method: string): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constant(method), weight: 30 },
    {
      arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND', 'get', 'FOO'),
      weight: 3,
    },
  );
}

export const versionArb: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constant('HTTP/1.1'), weight: 40 },
  { arbitrary: fc.constantFrom('HTTP/1.0', 'HTTP/9.9', 'HTTP/1.1 extra'), weight: 1 },
);

/** Credentials an endpoint accepts, in the headers they go in. */
export interface AuthChoice {
  headers: [string, string][];
}

/** Puts a request together; `sign` sees the final body bytes (the webhook's signature covers them). */
export function requestArb(options: {
  method: string;
  path: fc.Arbitrary<string>;
  port: number;
  template: Template;
  limitBytes: number;
  auth: fc.Arbitrary<[string, string][]>;
  sign?: fc.Arbitrary<(body: Buffer) => [string, string][]>;
  /** Last word on a body (e.g. never `wait: true` where a job could really run). */
  guard?: (body: Buffer) => Buffer;
  /** Bodies other than JSON near the template (the console's forms). */
  body?: fc.Arbitrary<BodyDraft>;
  /** How bodies are labelled, when not mostly JSON. */
  encoding?: fc.Arbitrary<Encoding>;
}): fc.Arbitrary<RawRequest & { bodyKind: BodyKind }> {
  const host = fc.oneof(
    { arbitrary: fc.constant<[string, string][]>([['Host', `127.0.0.1:${options.port}`]]), weight: 30 },
    {
      arbitrary: fc.constantFrom<[string, string][]>(
        [],
        [['Host', 'evil.example']],
        [
          ['Host', `127.0.0.1:${options.port}`],
          ['Host', 'evil.example'],
        ],
        [['Host', '']],
      ),
      weight: 1,
    },
  );
  const connection = fc.oneof(
    { arbitrary: fc.constant<[string, string][]>([['Connection', 'close']]), weight: 10 },
    {
      arbitrary: fc.constantFrom<[string, string][]>(
        [],
        [['Connection', 'keep-alive']],
        [
          ['Connection', 'upgrade'],
          ['Upgrade', 'websocket'],
        ],
      ),
      weight: 2,
    },
  );
  return fc
    .record({
      method: methodArb(options.method),
      target: options.path,
      version: versionArb,
      host,
      connection,
      auth: options.auth,
      body: options.body ?? bodyArb(options.template, options.limitBytes),
      encoding: options.encoding ?? encodingArb,
      framing: framingArb,
      noise: noiseHeaders,
      sign: options.sign ?? fc.constant(() => [] as [string, string][]),
      shuffle: fc.boolean(),
    })
    .map((r) => {
      const raw = options.guard ? options.guard(r.body.bytes) : r.body.bytes;
      const body = encodeBody(raw, r.encoding);
      const headers: [string, string][] = [...r.host, ...r.connection];
      if (r.encoding.contentType !== undefined) headers.push(['Content-Type', r.encoding.contentType]);
      if (r.encoding.secondContentType !== undefined) headers.push(['Content-Type', r.encoding.secondContentType]);
      if (r.encoding.contentEncoding !== undefined) headers.push(['Content-Encoding', r.encoding.contentEncoding]);
      headers.push(...r.auth, ...r.sign(raw), ...r.noise);
      if (r.shuffle) headers.reverse();
      return { method: r.method, target: r.target, version: r.version, headers, body, framing: r.framing, bodyKind: r.body.kind };
    });
}
