import { type BertNormalization, normalizeBertText, splitBertWords } from './bert-text.ts';

export interface WordPieceVocabulary {
  /** Token string to id; continuation pieces carry the "##" prefix. */
  readonly vocab: ReadonlyMap<string, number>;
  readonly unkToken: string;
  readonly clsToken: string;
  readonly sepToken: string;
  readonly padToken: string;
  /**
   * Tokens matched verbatim in the raw text before normalisation, as Hugging Face tokenizers does
   * with a tokenizer.json's added tokens: "[SEP]" inside a document is the separator, not 5 pieces.
   */
  readonly specialTokens: readonly string[];
  /** A longer word becomes one unknown token rather than a quadratic search (tokenizers: 100). */
  readonly maxInputCharsPerWord: number;
}

export interface TokenizerOptions extends BertNormalization {
  /** Including [CLS] and [SEP]. */
  readonly maxLength: number;
}

const CONTINUATION = '##';
const WINDOW_CHARS = 2048;
const ASCII_SPACE = /[ \t\n\r]/g;

function idOf(vocab: ReadonlyMap<string, number>, token: string): number {
  const id = vocab.get(token);
  if (id === undefined) throw new Error(`the vocabulary has no ${token} token`);
  return id;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** BERT WordPiece: basic tokenization, greedy longest-match pieces, [CLS] … [SEP], truncation. */
export class WordPieceTokenizer {
  readonly maxLength: number;
  readonly padId: number;
  readonly #vocab: ReadonlyMap<string, number>;
  readonly #normalization: BertNormalization;
  readonly #unkId: number;
  readonly #clsId: number;
  readonly #sepId: number;
  readonly #maxInputCharsPerWord: number;
  readonly #special: RegExp | undefined;

  constructor(vocabulary: WordPieceVocabulary, options: TokenizerOptions) {
    if (!Number.isInteger(options.maxLength) || options.maxLength < 2) {
      throw new Error(`maxLength must be an integer of at least 2 (room for [CLS] and [SEP]), got ${options.maxLength}`);
    }
    this.maxLength = options.maxLength;
    this.#vocab = vocabulary.vocab;
    this.#normalization = {
      lowercase: options.lowercase,
      stripAccents: options.stripAccents,
      handleChineseChars: options.handleChineseChars,
    };
    this.#unkId = idOf(vocabulary.vocab, vocabulary.unkToken);
    this.#clsId = idOf(vocabulary.vocab, vocabulary.clsToken);
    this.#sepId = idOf(vocabulary.vocab, vocabulary.sepToken);
    this.padId = idOf(vocabulary.vocab, vocabulary.padToken);
    this.#maxInputCharsPerWord = vocabulary.maxInputCharsPerWord;
    const special = vocabulary.specialTokens.filter((t) => t.length > 0 && vocabulary.vocab.has(t));
    // Longest first, so that of two tokens starting at the same place the longer one wins.
    special.sort((a, b) => b.length - a.length);
    this.#special = special.length > 0 ? new RegExp(special.map(escapeRegExp).join('|'), 'g') : undefined;
  }

  /** Token ids of one text: [CLS], at most maxLength - 2 pieces, [SEP]. */
  encode(text: string): number[] {
    const budget = this.maxLength - 2;
    const ids: number[] = [this.#clsId];
    const full = () => ids.length - 1 >= budget;
    let last = 0;
    if (this.#special) {
      for (const match of text.matchAll(this.#special)) {
        this.#encodePlain(text.slice(last, match.index), ids, full);
        if (full()) break;
        ids.push(idOf(this.#vocab, match[0]));
        last = match.index + match[0].length;
      }
    }
    if (!full()) this.#encodePlain(text.slice(last), ids, full);
    ids.length = Math.min(ids.length, budget + 1);
    ids.push(this.#sepId);
    return ids;
  }

  /**
   * A window at a time, cut just after an ASCII space or line break (a word boundary before and
   * after normalisation), so that a long text stops costing once the sequence is full.
   */
  #encodePlain(text: string, out: number[], full: () => boolean): void {
    for (let start = 0; start < text.length && !full(); ) {
      let end = text.length;
      if (start + WINDOW_CHARS < text.length) {
        ASCII_SPACE.lastIndex = start + WINDOW_CHARS;
        const space = ASCII_SPACE.exec(text);
        if (space) end = space.index + 1;
      }
      for (const word of splitBertWords(normalizeBertText(text.slice(start, end), this.#normalization))) {
        this.#wordPiece(word, out);
        if (full()) return;
      }
      start = end;
    }
  }

  #wordPiece(word: string, out: number[]): void {
    // Offsets of each code point, so that pieces never split a surrogate pair.
    const bounds: number[] = [];
    for (let i = 0; i < word.length; ) {
      bounds.push(i);
      i += (word.codePointAt(i) ?? 0) > 0xffff ? 2 : 1;
    }
    bounds.push(word.length);
    const chars = bounds.length - 1;
    if (chars > this.#maxInputCharsPerWord) {
      out.push(this.#unkId);
      return;
    }
    const pieces: number[] = [];
    let start = 0;
    while (start < chars) {
      let end = chars;
      let id: number | undefined;
      for (; end > start; end--) {
        const piece = word.slice(bounds[start], bounds[end]);
        id = this.#vocab.get(start > 0 ? CONTINUATION + piece : piece);
        if (id !== undefined) break;
      }
      // A word with any piece missing from the vocabulary is one unknown token as a whole.
      if (id === undefined) {
        out.push(this.#unkId);
        return;
      }
      pieces.push(id);
      start = end;
    }
    for (const id of pieces) out.push(id);
  }
}
