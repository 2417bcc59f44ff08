/**
 * BERT's "basic tokenization": the text normalisation and word splitting that run before WordPiece.
 * Written to give the same result as Hugging Face tokenizers' BertNormalizer and BertPreTokenizer
 * (the Rust code every BERT tokenizer.json is made for), character class by character class, since
 * one differing character changes the ids and so the vector.
 */

export interface BertNormalization {
  readonly lowercase: boolean;
  readonly stripAccents: boolean;
  readonly handleChineseChars: boolean;
}

// Unicode general categories as tokenizers' Rust code checks them. JS's \p{C} is Cc|Cf|Cs|Co|Cn,
// which is Rust's `is_other`; White_Space is what Rust's char::is_whitespace reads.
const OTHER = /^\p{C}$/u;
const WHITE_SPACE = /^\p{White_Space}$/u;
const PUNCTUATION = /^\p{P}$/u;
const NONSPACING_MARKS = /\p{Mn}/gu;

// The ASCII range is most of what code is made of, so it is answered from tables.
const ASCII_SPACE = new Uint8Array(128);
const ASCII_PUNCTUATION = new Uint8Array(128);
for (let cp = 0; cp < 128; cp++) {
  const ch = String.fromCharCode(cp);
  ASCII_SPACE[cp] = WHITE_SPACE.test(ch) ? 1 : 0;
  // BERT counts every ASCII symbol as punctuation ($, +, <, =, >, ^, `, |, ~ are not in \p{P}).
  ASCII_PUNCTUATION[cp] = (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126) ? 1 : 0;
}

function isWhitespace(ch: string, cp: number): boolean {
  return cp < 128 ? ASCII_SPACE[cp] === 1 : WHITE_SPACE.test(ch);
}

/** Tab, newline and carriage return are control characters that BERT treats as spaces. */
function isControl(ch: string, cp: number): boolean {
  if (cp === 9 || cp === 10 || cp === 13) return false;
  return cp < 128 ? cp < 32 || cp === 127 : OTHER.test(ch);
}

function isPunctuation(ch: string, cp: number): boolean {
  return cp < 128 ? ASCII_PUNCTUATION[cp] === 1 : PUNCTUATION.test(ch);
}

/** The CJK Unified Ideographs blocks, exactly as tokenizers lists them (not Hiragana, Katakana or Hangul). */
function isChineseChar(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b920 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

// Printable ASCII, tab and newlines: most code, and text that only needs its newlines made spaces.
const PLAIN_ASCII = /^[\x20-\x7e\t\n\r]*$/;
const ASCII_BREAKS = /[\t\n\r]/g;

export function normalizeBertText(text: string, options: BertNormalization): string {
  if (PLAIN_ASCII.test(text)) {
    const spaced = text.replace(ASCII_BREAKS, ' ');
    return options.lowercase ? spaced.toLowerCase() : spaced;
  }
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp === 0 || cp === 0xfffd || isControl(ch, cp)) continue;
    if (isWhitespace(ch, cp)) out += ' ';
    else if (options.handleChineseChars && isChineseChar(cp)) out += ` ${ch} `;
    else out += ch;
  }
  // Same order as tokenizers: accents go before lowercasing, so "İ" becomes "i", not "i" + a dot.
  if (options.stripAccents) out = out.normalize('NFD').replace(NONSPACING_MARKS, '');
  if (options.lowercase) out = lowercaseEachCodePoint(out);
  return out;
}

/**
 * Rust lowercases one character at a time; String.prototype.toLowerCase looks at context (a final
 * sigma becomes "ς"), which would give a token the vocabulary spells differently.
 */
function lowercaseEachCodePoint(text: string): string {
  let out = '';
  for (const ch of text) out += ch.toLowerCase();
  return out;
}

/** Splits on whitespace and makes every punctuation character a word of its own. */
export function splitBertWords(normalized: string): string[] {
  const words: string[] = [];
  let start = -1;
  let i = 0;
  for (const ch of normalized) {
    const cp = ch.codePointAt(0) ?? 0;
    const space = isWhitespace(ch, cp);
    if (space || isPunctuation(ch, cp)) {
      if (start >= 0) words.push(normalized.slice(start, i));
      if (!space) words.push(ch);
      start = -1;
    } else if (start < 0) {
      start = i;
    }
    i += ch.length;
  }
  if (start >= 0) words.push(normalized.slice(start));
  return words;
}
