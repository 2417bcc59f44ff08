import fc from 'fast-check';
import { NASTY_STRINGS, encodingArb, invalidUtf8, type BodyDraft, type Encoding } from './arbitraries.ts';
import { hostileEmail, hostileNext } from './hostile-content.ts';

/**
 * Bodies of the console's HTML forms (application/x-www-form-urlencoded): each field kept, replaced,
 * dropped or repeated, keys the parser might read as structure, broken percent-encoding, more fields
 * than the parser allows (up to 10,000 of one name), and bodies past the forms' 16 kB limit.
 */

/** A form's fields, each with an arbitrary of valid values (plain strings, not JSON). */
export type FormTemplate = Record<string, fc.Arbitrary<string>>;

/** Percent-encodes every byte but the unreserved ones, as a browser's form does (a lone surrogate goes as U+FFFD). */
export const formEncode = (value: string): string =>
  [...Buffer.from(value, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');

const pair = ([k, v]: [string, string]) => `${formEncode(k)}=${formEncode(v)}`;

const FORM_LIMIT = 16 * 1024;

/** A value of a field nobody planned for. */
export const nastyFormValue: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...NASTY_STRINGS), weight: 5 },
  { arbitrary: hostileEmail, weight: 2 },
  { arbitrary: hostileNext, weight: 2 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 3 },
  { arbitrary: fc.constantFrom(FORM_LIMIT - 200, FORM_LIMIT + 10, 90_000).map((n) => 'v'.repeat(n)), weight: 1 },
);

const extraField = fc.tuple(
  fc.constantFrom('__proto__', '__proto__[admin]', 'constructor[prototype][x]', 'a[b][c]', 'csrf', 'role', 'subscriptionId', '', '[]', 'x'),
  nastyFormValue,
);

function templateFields(template: FormTemplate): fc.Arbitrary<[string, string][]> {
  const names = Object.keys(template);
  const field = (name: string) =>
    fc.oneof(
      { arbitrary: template[name]!.map((v): [string, string][] => [[name, v]]), weight: 12 },
      { arbitrary: nastyFormValue.map((v): [string, string][] => [[name, v]]), weight: 5 },
      { arbitrary: fc.constant<[string, string][]>([]), weight: 2 },
      {
        arbitrary: fc.tuple(template[name]!, nastyFormValue).map(([a, b]): [string, string][] => [
          [name, a],
          [name, b],
        ]),
        weight: 1,
      },
      { arbitrary: template[name]!.map((v): [string, string][] => [[`${name}[]`, v]]), weight: 1 },
    );
  return fc.tuple(fc.tuple(...names.map(field)), fc.array(extraField, { maxLength: 3 }), fc.nat(3)).map(([fields, extras, at]) => {
    const entries = fields.flat();
    entries.splice(Math.min(at, entries.length), 0, ...extras);
    return entries;
  });
}

const validFields = (template: FormTemplate): fc.Arbitrary<[string, string][]> =>
  fc.tuple(...Object.keys(template).map((name) => template[name]!.map((v): [string, string] => [name, v])));

export function formBodyArb(template: FormTemplate): fc.Arbitrary<BodyDraft> {
  const utf8 =
    (kind: BodyDraft['kind']) =>
    (text: string): BodyDraft => ({ kind, bytes: Buffer.from(text, 'utf8') });
  const names = Object.keys(template);
  return fc.oneof(
    {
      arbitrary: templateFields(template)
        .map((e) => e.map(pair).join('&'))
        .map(utf8('template')),
      weight: 40,
    },
    {
      arbitrary: validFields(template)
        .map((e) => e.map(pair).join('&'))
        .map(utf8('valid')),
      weight: 14,
    },
    {
      arbitrary: fc
        .tuple(
          validFields(template),
          fc.constantFrom('%', '%zz=1', 'a=%E0%A4%A', '&&&&', '=', '==x', ';a=1', 'a=1;b=2', '+=+', '%00=%00', 'x=\u00ff', '&=&'),
        )
        .map(([e, junk]) => `${e.map(pair).join('&')}&${junk}`)
        .map(utf8('bad-form')),
      weight: 6,
    },
    {
      // One field many times (10,000 addresses for an invitation), or many fields: past the parser's
      // 20-field limit, within and past the 16 kB body limit.
      arbitrary: fc
        .tuple(validFields(template), fc.constantFrom(...names, 'x'), fc.constantFrom(21, 200, 1_000, 10_000))
        .map(([e, name, n]) => {
          const filler = Array.from({ length: n }, (_, i) => pair([name, name === 'email' ? `flood-${i}@example.test` : `v${i}`]));
          return [...e.map(pair), ...filler].join('&');
        })
        .map(utf8('many-fields')),
      weight: 2,
    },
    {
      arbitrary: validFields(template)
        .map((e) => JSON.stringify(Object.fromEntries(e)))
        .map(utf8('value')),
      weight: 3,
    },
    { arbitrary: fc.constant(utf8('empty')('')), weight: 3 },
    {
      arbitrary: fc
        .oneof(
          fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
          invalidUtf8,
        )
        .map((bytes): BodyDraft => ({ kind: 'bytes', bytes })),
      weight: 3,
    },
    {
      arbitrary: fc
        .constantFrom(FORM_LIMIT + 1, FORM_LIMIT * 4, 1_000_000)
        .map((n): BodyDraft => ({ kind: 'oversize', bytes: Buffer.from(`csrf=x&a=${'a'.repeat(n)}`, 'utf8') })),
      weight: 1,
    },
  );
}

const FORM_TYPE = 'application/x-www-form-urlencoded';

/** Labelled as a form mostly; otherwise every labelling the JSON endpoints get. */
export const formEncodingArb: fc.Arbitrary<Encoding> = fc.oneof(
  {
    arbitrary: fc.constant<Encoding>({
      contentType: FORM_TYPE,
      secondContentType: undefined,
      contentEncoding: undefined,
      transform: 'none',
    }),
    weight: 30,
  },
  {
    arbitrary: fc
      .constantFrom(
        `${FORM_TYPE}; charset=utf-8`,
        `${FORM_TYPE}; charset=latin1`,
        `${FORM_TYPE}; charset=klingon`,
        'APPLICATION/X-WWW-FORM-URLENCODED',
      )
      .map((contentType): Encoding => ({ contentType, secondContentType: undefined, contentEncoding: undefined, transform: 'none' })),
    weight: 3,
  },
  {
    arbitrary: fc.constant<Encoding>({
      contentType: FORM_TYPE,
      secondContentType: 'application/json',
      contentEncoding: undefined,
      transform: 'none',
    }),
    weight: 1,
  },
  { arbitrary: encodingArb, weight: 6 },
);
