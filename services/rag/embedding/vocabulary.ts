import { basename } from 'node:path';
import { z } from 'zod';
import type { BertNormalization } from './bert-text.ts';
import type { WordPieceVocabulary } from './tokenizer.ts';

/**
 * A WordPiece vocabulary from either file a BERT model ships: Hugging Face's tokenizer.json (which
 * also says how the model normalises text, checked against the manifest) or a plain vocab.txt
 * (one token per line, the line number is the id).
 */

const DEFAULT_MAX_INPUT_CHARS_PER_WORD = 100;
const STANDARD_SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'] as const;

const tokenizerJsonSchema = z.object({
  model: z.object({
    type: z.literal('WordPiece', { error: 'model.type must be "WordPiece" (only BERT WordPiece tokenizers are supported)' }),
    vocab: z.record(z.string(), z.number().int().nonnegative()),
    unk_token: z.string().default('[UNK]'),
    continuing_subword_prefix: z.literal('##', { error: 'model.continuing_subword_prefix must be "##"' }).default('##'),
    max_input_chars_per_word: z.number().int().positive().default(DEFAULT_MAX_INPUT_CHARS_PER_WORD),
  }),
  added_tokens: z
    .array(z.object({ content: z.string(), special: z.boolean().default(false), normalized: z.boolean().default(false) }))
    .default([]),
  normalizer: z
    .object({
      type: z.string(),
      lowercase: z.boolean().optional(),
      strip_accents: z.boolean().nullable().optional(),
      handle_chinese_chars: z.boolean().optional(),
    })
    .nullable()
    .optional(),
});

export class VocabularyError extends Error {
  constructor(file: string, reason: string) {
    super(`${file}: ${reason}`);
    this.name = 'VocabularyError';
  }
}

function withStandardTokens(
  vocab: ReadonlyMap<string, number>,
  specialTokens: readonly string[],
  maxInputCharsPerWord: number,
  unkToken = '[UNK]',
): WordPieceVocabulary {
  return {
    vocab,
    unkToken,
    clsToken: '[CLS]',
    sepToken: '[SEP]',
    padToken: '[PAD]',
    specialTokens,
    maxInputCharsPerWord,
  };
}

function checkStandardTokens(file: string, vocab: ReadonlyMap<string, number>, unkToken: string): void {
  for (const token of [unkToken, '[CLS]', '[SEP]', '[PAD]']) {
    if (!vocab.has(token)) throw new VocabularyError(file, `the vocabulary has no ${token} token`);
  }
}

export function parseVocabTxt(file: string, text: string): WordPieceVocabulary {
  const vocab = new Map<string, number>();
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  lines.forEach((line, id) => {
    const token = line.endsWith('\r') ? line.slice(0, -1) : line;
    // The first occurrence wins, as in Hugging Face's loader.
    if (!vocab.has(token)) vocab.set(token, id);
  });
  if (vocab.size === 0) throw new VocabularyError(file, 'empty vocabulary');
  checkStandardTokens(file, vocab, '[UNK]');
  return withStandardTokens(
    vocab,
    STANDARD_SPECIAL_TOKENS.filter((t) => vocab.has(t)),
    DEFAULT_MAX_INPUT_CHARS_PER_WORD,
  );
}

/** Fails when tokenizer.json normalises differently from what the manifest says. */
export function parseTokenizerJson(file: string, text: string, expected: BertNormalization): WordPieceVocabulary {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new VocabularyError(file, `not JSON (${(e as Error).message})`);
  }
  const parsed = tokenizerJsonSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new VocabularyError(file, `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  const { model, added_tokens: added, normalizer } = parsed.data;
  if (normalizer) {
    if (normalizer.type !== 'BertNormalizer')
      throw new VocabularyError(file, `normalizer.type is ${normalizer.type}, only BertNormalizer is supported`);
    const lowercase = normalizer.lowercase ?? true;
    // null means "follow lowercase", as in tokenizers.
    const stripAccents = normalizer.strip_accents ?? lowercase;
    const chinese = normalizer.handle_chinese_chars ?? true;
    const mismatch = [
      lowercase !== expected.lowercase && `lowercase ${lowercase}`,
      stripAccents !== expected.stripAccents && `strip accents ${stripAccents}`,
      chinese !== expected.handleChineseChars && `handle Chinese chars ${chinese}`,
    ].filter(Boolean);
    if (mismatch.length > 0) {
      throw new VocabularyError(file, `its normalizer says ${mismatch.join(', ')}, which the manifest's tokenizer settings contradict`);
    }
  }
  const vocab = new Map(Object.entries(model.vocab));
  checkStandardTokens(file, vocab, model.unk_token);
  // Tokens marked "normalized" would be matched after normalisation; BERT's never are, and
  // matching them on the raw text instead would be wrong, so they are left to WordPiece.
  const special = added.filter((t) => !t.normalized).map((t) => t.content);
  return withStandardTokens(vocab, special, model.max_input_chars_per_word, model.unk_token);
}

export function parseVocabularyFile(file: string, text: string, expected: BertNormalization): WordPieceVocabulary {
  return basename(file).endsWith('.json') ? parseTokenizerJson(file, text, expected) : parseVocabTxt(file, text);
}
