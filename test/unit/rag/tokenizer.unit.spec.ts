import { expect } from 'chai';
import { normalizeBertText, splitBertWords } from '../../../services/rag/embedding/bert-text.ts';
import { WordPieceTokenizer, type WordPieceVocabulary } from '../../../services/rag/embedding/tokenizer.ts';
import { parseTokenizerJson, parseVocabTxt, VocabularyError } from '../../../services/rag/embedding/vocabulary.ts';
import { tokenizerReference } from './reference.ts';

const UNCASED = { lowercase: true, stripAccents: true, handleChineseChars: true } as const;

function referenceVocabulary(vocab: Readonly<Record<string, number>>): WordPieceVocabulary {
  return {
    vocab: new Map(Object.entries(vocab)),
    unkToken: '[UNK]',
    clsToken: '[CLS]',
    sepToken: '[SEP]',
    padToken: '[PAD]',
    specialTokens: ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'],
    maxInputCharsPerWord: 100,
  };
}

describe('rag embedding: WordPiece tokenizer (unit)', () => {
  describe("ids equal those of the model's reference tokenizer (Hugging Face tokenizers)", () => {
    const reference = tokenizerReference();
    const tokenizer = new WordPieceTokenizer(referenceVocabulary(reference.vocab), { ...UNCASED, maxLength: reference.maxSequenceLength });

    it('covers the tricky inputs it claims to', () => {
      expect(reference.cases.length).to.be.at.least(15);
      expect(reference.cases.some((c) => c.ids.length === reference.maxSequenceLength)).to.equal(true);
    });

    for (const c of reference.cases) {
      it(c.name, () => {
        expect(tokenizer.encode(c.text)).to.deep.equal(c.ids);
      });
    }

    it('gives the same pieces when a long text is read a window at a time', () => {
      const long = reference.cases.find((c) => c.name.startsWith('long code'))?.text ?? '';
      expect(long.length).to.be.above(3 * 2048);
      const untruncated = new WordPieceTokenizer(referenceVocabulary(reference.vocab), { ...UNCASED, maxLength: 100_000 });
      const inner = (ids: number[]) => ids.slice(1, -1);
      const lineByLine = long.split('\n').flatMap((line) => inner(untruncated.encode(line)));
      expect(inner(untruncated.encode(long))).to.deep.equal(lineByLine);
    });
  });

  describe('normalisation of an uncased model', () => {
    it('lowercases and strips accents, composed or not', () => {
      expect(normalizeBertText('Ångström Café cafe\u0301 NAÏVE', UNCASED)).to.equal('angstrom cafe cafe naive');
    });

    it('lowercases one character at a time (a final sigma stays σ)', () => {
      expect(normalizeBertText('ΟΔΟΣ', UNCASED)).to.equal('οδοσ');
    });

    it('drops control characters and turns every kind of whitespace into a space', () => {
      expect(normalizeBertText('a\u0000b\u0007c\u200bd\ufeffe\ufffdf\tg\nh\u00a0i\u3000j', UNCASED)).to.equal('abcdef g h i j');
    });

    it('puts spaces around CJK ideographs only', () => {
      expect(normalizeBertText('ab检索cd カタ', UNCASED)).to.equal('ab 检  索 cd カタ');
    });

    it('keeps case and accents for a cased model', () => {
      expect(normalizeBertText('Café Σ', { lowercase: false, stripAccents: false, handleChineseChars: true })).to.equal('Café Σ');
    });
  });

  describe('word splitting', () => {
    it('isolates every punctuation character, ASCII symbols included', () => {
      expect(splitBertWords('a.b(c)+d$e_f  g~h')).to.deep.equal([
        'a',
        '.',
        'b',
        '(',
        'c',
        ')',
        '+',
        'd',
        '$',
        'e',
        '_',
        'f',
        'g',
        '~',
        'h',
      ]);
    });

    it('isolates Unicode punctuation but not other symbols', () => {
      expect(splitBertWords('«x»—y€z')).to.deep.equal(['«', 'x', '»', '—', 'y€z']);
    });
  });

  describe('wordpiece and the sequence', () => {
    const vocab = referenceVocabulary({
      '[PAD]': 0,
      '[UNK]': 1,
      '[CLS]': 2,
      '[SEP]': 3,
      '[MASK]': 4,
      get: 5,
      '##user': 6,
      '##by': 7,
      '##id': 8,
      user: 9,
      _: 10,
      id: 11,
      '##s': 12,
    });
    const tokenizer = new WordPieceTokenizer(vocab, { ...UNCASED, maxLength: 8 });

    it('splits identifiers into the longest pieces the vocabulary has, with ## after the first', () => {
      expect(tokenizer.encode('getUserById')).to.deep.equal([2, 5, 6, 7, 8, 3]);
      expect(tokenizer.encode('user_ids')).to.deep.equal([2, 9, 10, 11, 12, 3]);
    });

    it('makes a word with any unknown piece one [UNK]', () => {
      expect(tokenizer.encode('getX user')).to.deep.equal([2, 1, 9, 3]);
    });

    it('truncates to maxLength including [CLS] and [SEP]', () => {
      const ids = tokenizer.encode('user '.repeat(50));
      expect(ids).to.deep.equal([2, 9, 9, 9, 9, 9, 9, 3]);
    });

    it('truncates inside a word split into pieces', () => {
      expect(tokenizer.encode('getUserById getUserById')).to.deep.equal([2, 5, 6, 7, 8, 5, 6, 3]);
    });

    it('recognises special tokens written in the text, before lowercasing', () => {
      expect(tokenizer.encode('user[MASK][mask]')).to.deep.equal([2, 9, 4, 1, 1, 1, 3]);
    });

    it('refuses a maxLength with no room for [CLS] and [SEP]', () => {
      expect(() => new WordPieceTokenizer(vocab, { ...UNCASED, maxLength: 1 })).to.throw(/maxLength/);
    });
  });

  describe('vocabulary files', () => {
    it('reads vocab.txt: the line number is the id', () => {
      const vocabulary = parseVocabTxt('vocab.txt', '[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\nhello\r\n##s\r\n');
      const tokenizer = new WordPieceTokenizer(vocabulary, { ...UNCASED, maxLength: 16 });
      expect(tokenizer.encode('Hellos')).to.deep.equal([2, 4, 5, 3]);
    });

    it('refuses a vocab.txt without [CLS], naming the file', () => {
      expect(() => parseVocabTxt('/m/vocab.txt', '[PAD]\n[UNK]\n[SEP]\n')).to.throw(
        VocabularyError,
        '/m/vocab.txt: the vocabulary has no [CLS] token',
      );
    });

    const tokenizerJson = (normalizer: object, model: object = {}) =>
      JSON.stringify({
        added_tokens: [{ id: 2, content: '[CLS]', special: true, normalized: false }],
        normalizer: { type: 'BertNormalizer', ...normalizer },
        model: { type: 'WordPiece', unk_token: '[UNK]', vocab: { '[PAD]': 0, '[UNK]': 1, '[CLS]': 2, '[SEP]': 3 }, ...model },
      });

    it('reads tokenizer.json when its normalizer agrees with the manifest (strip_accents null follows lowercase)', () => {
      const vocabulary = parseTokenizerJson('tokenizer.json', tokenizerJson({ lowercase: true, strip_accents: null }), UNCASED);
      expect(vocabulary.vocab.get('[SEP]')).to.equal(3);
      expect(vocabulary.specialTokens).to.deep.equal(['[CLS]']);
    });

    it('refuses a tokenizer.json whose normalizer contradicts the manifest', () => {
      expect(() => parseTokenizerJson('/m/tokenizer.json', tokenizerJson({ lowercase: false }), UNCASED)).to.throw(
        VocabularyError,
        /^\/m\/tokenizer\.json: .*lowercase false/,
      );
    });

    it('refuses a tokenizer.json that is not WordPiece', () => {
      expect(() => parseTokenizerJson('t.json', tokenizerJson({ lowercase: true }, { type: 'BPE' }), UNCASED)).to.throw(
        VocabularyError,
        /model\.type/,
      );
    });
  });
});
