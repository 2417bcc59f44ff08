/**
 * How untrusted text (a customer's file paths, component and export names, page text, URLs) is
 * written into the test source we hand back. The customer runs that source, so a path or a name
 * that ends a comment or a string early would run as their code: every such value goes through
 * one of these functions, never straight into a template.
 */

/**
 * Characters escaped wherever they land: JavaScript's line terminators (U+2028 and U+2029 end a `//`
 * comment as \n does), the other C0 and C1 controls, and the invisible direction controls that make
 * an editor show code in another order than it runs ("Trojan Source": ALM, LRM, RLM, LRE..RLO, LRI..PDI)
 * and the byte-order mark. Lone surrogates too: they are not valid UTF-8, so the file would not be.
 */
const UNSAFE =
  /[\0-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

const unicodeEscape = (char: string): string => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * A JavaScript string literal that evaluates to `value` and is safe in any position of a script or
 * module: nothing in it ends the literal or the line, and nothing invisible reorders the code
 * around it. Double quotes unless `quote` says otherwise.
 */
export function jsString(value: string, quote: '"' | "'" = '"'): string {
  // JSON.stringify escapes quotes, backslashes, C0 controls and lone surrogates; the rest is ours.
  let body = JSON.stringify(value).slice(1, -1);
  // In JSON's output every backslash starts an escape pair and every `"` is escaped, so `\"` is always one pair.
  if (quote === "'") body = body.replace(/\\"/g, '"').replace(/'/g, "\\'");
  return `${quote}${body.replace(UNSAFE, unicodeEscape)}${quote}`;
}

const INVISIBLE = /[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g;

/**
 * Code built elsewhere whose only untrusted text sits in string literals written with JSON.stringify
 * (page/locator-code.ts): JSON leaves U+2028, U+2029 and the direction controls raw, and those can only
 * be inside its literals, where a `\uXXXX` escape stands for the same character.
 */
export function escapeInvisibles(code: string): string {
  return code.replace(INVISIBLE, unicodeEscape);
}

/**
 * Text that stays inside the comment it is written into, `//` or `/* *\/`: no line terminator, no
 * `*\/`, no trailing `*` (a `/` written after it would close a block comment), and the characters
 * above shown as `\uXXXX` escapes.
 */
export function commentText(value: string): string {
  return value.replace(UNSAFE, unicodeEscape).replace(/\*\//g, '*\\/').replace(/\*$/, '\\u002a');
}

/** Reserved words in strict mode and modules (test files are ES modules or strict CommonJS under some runners). */
const RESERVED = new Set([
  'await',
  'break',
  'case',
  'catch',
  'class',
  'const',
  'continue',
  'debugger',
  'default',
  'delete',
  'do',
  'else',
  'enum',
  'export',
  'extends',
  'false',
  'finally',
  'for',
  'function',
  'if',
  'implements',
  'import',
  'in',
  'instanceof',
  'interface',
  'let',
  'new',
  'null',
  'package',
  'private',
  'protected',
  'public',
  'return',
  'static',
  'super',
  'switch',
  'this',
  'throw',
  'true',
  'try',
  'typeof',
  'var',
  'void',
  'while',
  'with',
  'yield',
  'arguments',
  'eval',
]);

const IDENTIFIER_NAME = /^[\p{ID_Start}$_][\p{ID_Continue}$\u200c\u200d]*$/u;

/**
 * A name the test may write bare, as a binding or a reference: a JavaScript identifier that is not
 * a reserved word. The parser's `identifier` nodes are looser than the language (tree-sitter takes
 * direction controls in one), so a name read from customer code is checked before it is emitted.
 */
export function isIdentifier(name: string): boolean {
  return IDENTIFIER_NAME.test(name) && !RESERVED.has(name);
}

/** `name` for a bare position in generated code; throws on anything else (callers check with isIdentifier first). */
export function identifier(name: string): string {
  if (!isIdentifier(name)) throw new TypeError(`${jsString(name)} is not an identifier a generated test can write bare`);
  return name;
}

/**
 * One word of a shell command (the run command a customer pastes): left as it is when it holds
 * only characters no shell treats specially, else single-quoted.
 */
export function shellWord(value: string): string {
  if (/^[\p{L}\p{N}_@%+=:,./-]+$/u.test(value)) return value;
  return `'${value.replace(/'/g, "'\\''")}'`;
}
