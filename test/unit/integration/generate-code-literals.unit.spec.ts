import { expect } from 'chai';
import fc from 'fast-check';
import {
  commentText,
  escapeInvisibles,
  identifier,
  isIdentifier,
  jsString,
  shellWord,
} from '../../../services/integration/generate/code-literals.ts';
import { BIDI_CONTROL, LINE_TERMINATOR, readGenerated } from './generated-source.ts';

/** Strings heavy in what breaks out of comments and literals, mixed with anything at all (lone surrogates included). */
const hostile = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({
    unit: fc.constantFrom(
      '*',
      '/',
      '\n',
      '\r',
      '\u2028',
      '\u2029',
      '\u202e',
      '\u2066',
      '\u061c',
      '\ufeff',
      '\ud800',
      '\udc00',
      '\ud83d\ude00',
      "'",
      '"',
      '\\',
      '`',
      '$',
      '{',
      'a',
      ' ',
    ),
  }),
);

// biome-ignore lint/security/noGlobalEval: the property is that evaluating the literal gives the string back; it evaluates only what jsString made
const indirectEval = eval;

describe('code literals: untrusted text in generated code (unit)', () => {
  it('commentText never holds a line terminator, `*/`, a trailing `*`, a direction control or a lone surrogate', () => {
    fc.assert(
      fc.property(hostile, (value) => {
        const text = commentText(value);
        expect(text).to.not.match(LINE_TERMINATOR);
        expect(text).to.not.include('*/');
        expect(text.endsWith('*')).to.equal(false);
        expect(text).to.not.match(BIDI_CONTROL);
        expect(text.isWellFormed()).to.equal(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('commentText stays one comment in a line comment and in a block comment, with a statement after it', function () {
    // Each run type-checks three small files' syntax with the TypeScript compiler (a few ms each).
    this.timeout(30_000);
    fc.assert(
      fc.property(hostile, (value) => {
        for (const code of [
          `// ${commentText(value)}\nconst kept = 1;\n`,
          `/* ${commentText(value)}*/ const kept = 1;\n`,
          `/*${commentText(value)}*/const kept = 1;\n`,
        ]) {
          const parsed = readGenerated(code);
          expect(parsed.statements, JSON.stringify(code)).to.deep.equal(['VariableStatement']);
          expect(parsed.comments, JSON.stringify(code)).to.have.length(1);
          expect(parsed.syntaxErrors, JSON.stringify(code)).to.deep.equal([]);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('jsString evaluates to the same string, in either quote, and holds nothing raw that ends a line or reorders one', () => {
    fc.assert(
      fc.property(hostile, (value) => {
        for (const literal of [jsString(value), jsString(value, "'")]) {
          expect(indirectEval(literal)).to.equal(value);
          expect(literal).to.not.match(LINE_TERMINATOR);
          expect(literal).to.not.match(BIDI_CONTROL);
          expect(literal.isWellFormed()).to.equal(true);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('jsString keeps the styles the generated tests use', () => {
    expect(jsString('Add to cart')).to.equal('"Add to cart"');
    expect(jsString("it's", "'")).to.equal("'it\\'s'");
    expect(jsString('say "hi"', "'")).to.equal('\'say "hi"\'');
    expect(jsString('\\"', "'")).to.equal("'\\\\\"'");
    expect(jsString('a\u2028b\u202ec')).to.equal('"a\\u2028b\\u202ec"');
    expect(jsString('…é😀')).to.equal('"…é😀"');
  });

  it('escapeInvisibles escapes only what JSON.stringify leaves raw, so JSON literals keep their values', () => {
    fc.assert(
      fc.property(hostile, (value) => {
        const escaped = escapeInvisibles(`page.getByText(${JSON.stringify(value)}, { exact: true })`);
        expect(escaped).to.not.match(LINE_TERMINATOR);
        expect(escaped).to.not.match(BIDI_CONTROL);
        const literal = escaped.slice('page.getByText('.length, -', { exact: true })'.length);
        expect(indirectEval(literal)).to.equal(value);
      }),
      { numRuns: 500 },
    );
  });

  it('identifiers: JavaScript names that are not reserved, no invisible direction controls', () => {
    for (const name of ['add', '$add', '_x', 'Größe', 'RangeError', 'a1']) expect(isIdentifier(name), name).to.equal(true);
    for (const name of ['Bad\u202eError', 'if', 'await', 'let', 'default', '"x"', 'a b', '1a', '', 'a-b', 'x\u2028y'])
      expect(isIdentifier(name), JSON.stringify(name)).to.equal(false);
    expect(() => identifier('Bad\u202eError')).to.throw(TypeError, 'Bad\\u202eError');
  });

  it('shellWord quotes what a shell would expand or split', () => {
    expect(shellWord('test/generated/add.unit.spec.js')).to.equal('test/generated/add.unit.spec.js');
    expect(shellWord('test/generated/$add.unit.spec.js')).to.equal("'test/generated/$add.unit.spec.js'");
    expect(shellWord("a b'c")).to.equal("'a b'\\''c'");
  });
});
