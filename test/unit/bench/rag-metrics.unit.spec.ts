import { expect } from 'chai';
import { evalFilesOf } from '../../../bench/rag-eval/eval-files.ts';
import { firstRelevantRank, ndcgAt, outcome, relevant, score } from '../../../bench/rag-eval/metrics.ts';
import type { AnswerRange, RangeHit } from '../../../bench/rag-eval/metrics.ts';

const hit = (file: string, startLine: number, endLine: number): RangeHit => ({ file, startLine, endLine });
const answer = (file: string, from: number, to: number): AnswerRange => ({ file, lines: [from, to] });

describe('npm run bench:rag metrics (unit)', () => {
  it('counts a hit at line level only when a third of its lines lie in the answer; at file level the file is enough', () => {
    const a = answer('f.js', 10, 20);
    expect(relevant(hit('f.js', 15, 30), a)).to.equal(true); // 6 of 16 lines inside: more than a third
    expect(relevant(hit('f.js', 1, 40), a)).to.equal(false); // 11 of 40: less than a third
    expect(relevant(hit('f.js', 1, 40), a, true)).to.equal(true);
    expect(relevant(hit('g.js', 10, 20), a, true)).to.equal(false);
    expect(firstRelevantRank([hit('g.js', 1, 5), hit('f.js', 1, 40), hit('f.js', 12, 14)], [a])).to.equal(3);
    expect(firstRelevantRank([hit('g.js', 1, 5), hit('f.js', 1, 40)], [a], true)).to.equal(2);
    expect(firstRelevantRank([hit('g.js', 1, 5)], [a])).to.equal(undefined);
  });

  it('recall@5, recall@10 and MRR over the first relevant ranks, nDCG@10 as the mean (ranks 1, 3, 7, none)', () => {
    const s = score([
      { rank: 1, ndcgAt10: 1 },
      { rank: 3, ndcgAt10: 0.5 },
      { rank: 7, ndcgAt10: 0 },
      { rank: undefined, ndcgAt10: 0 },
    ]);
    expect(s.queries).to.equal(4);
    expect(s.recallAt5).to.equal(0.5); // ranks 1 and 3
    expect(s.recallAt10).to.equal(0.75); // and 7
    expect(s.mrr).to.be.closeTo((1 + 1 / 3 + 1 / 7) / 4, 1e-12); // 31 / 84 = 0.369
    expect(s.mrr).to.be.closeTo(0.369048, 1e-6);
    expect(s.ndcgAt10).to.equal(0.375);
    expect(score([])).to.deep.equal({ recallAt5: 0, recallAt10: 0, mrr: 0, ndcgAt10: 0, queries: 0 });
  });

  it('nDCG@10 at line level: a second chunk of an answer already found gains nothing; ideal DCG from the distinct answers', () => {
    const answers = [answer('f.js', 10, 20), answer('f.js', 50, 60)];
    const hits = [hit('g.js', 1, 9), hit('f.js', 12, 18), hit('f.js', 14, 19), hit('f.js', 50, 55)];
    // DCG = 1/log2(3) + 1/log2(5) = 1.0616; ideal (two answers) = 1 + 1/log2(3) = 1.6309
    expect(ndcgAt(hits, answers)).to.be.closeTo(0.650921, 1e-6);
    // the same answer twice is one distinct answer
    expect(ndcgAt([hit('f.js', 12, 18)], [answer('f.js', 10, 20), answer('f.js', 10, 20)])).to.equal(1);
  });

  it('nDCG@10 at file level counts distinct answer files', () => {
    const answers = [answer('f.js', 10, 20), answer('f.js', 50, 60)];
    const hits = [hit('g.js', 1, 9), hit('f.js', 12, 18), hit('f.js', 50, 55)];
    // one distinct file, found at rank 2: (1/log2 3) / 1
    expect(ndcgAt(hits, answers, true)).to.be.closeTo(0.63093, 1e-6);
    // two files, only one found, at rank 1: 1 / (1 + 1/log2 3)
    expect(ndcgAt([hit('f.js', 1, 2)], [answer('f.js', 1, 2), answer('h.js', 1, 2)], true)).to.be.closeTo(0.613147, 1e-6);
  });

  it('nDCG@10: one hit relevant to two answers gains 1, not 2; the ideal is capped at 10; hits past rank 10 are not seen', () => {
    // one chunk covers both answers: DCG 1, ideal 1 + 1/log2 3
    expect(ndcgAt([hit('f.js', 10, 20)], [answer('f.js', 10, 15), answer('f.js', 14, 20)])).to.be.closeTo(0.613147, 1e-6);
    const twelve = Array.from({ length: 12 }, (_, i) => answer('f.js', i * 10 + 1, i * 10 + 5));
    const inOrder = twelve.map((a) => hit(a.file, a.lines[0], a.lines[1]));
    expect(ndcgAt(inOrder, twelve)).to.be.closeTo(1, 1e-12); // ten found in the top 10 of twelve: ideal capped at 10
    const late = [...Array.from({ length: 10 }, () => hit('other.js', 1, 2)), hit('f.js', 1, 5)];
    expect(ndcgAt(late, twelve)).to.equal(0);
    expect(outcome(late, twelve)).to.deep.equal({ rank: 11, ndcgAt10: 0 });
  });
});

describe('npm run bench:rag evaluation sets, BENCH_RAG_EVAL (unit)', () => {
  const present = ['undici-7.29.0.json', 'README.md', 'mongodb-7.0.0.json', 'metrics.ts', 'nodemailer-10.6.0.json'];

  it('runs every set in the folder when unset, empty or all', () => {
    const every = ['bench/rag-eval/mongodb-7.0.0.json', 'bench/rag-eval/nodemailer-10.6.0.json', 'bench/rag-eval/undici-7.29.0.json'];
    expect(evalFilesOf(undefined, present)).to.deep.equal(every);
    expect(evalFilesOf('', present)).to.deep.equal(every);
    expect(evalFilesOf('all', present)).to.deep.equal(every);
  });

  it('takes a comma-separated list of paths or names, in the order given, each once', () => {
    expect(evalFilesOf('undici-7.29.0, bench/rag-eval/mongodb-7.0.0.json,undici-7.29.0.json', present)).to.deep.equal([
      'bench/rag-eval/undici-7.29.0.json',
      'bench/rag-eval/mongodb-7.0.0.json',
    ]);
  });

  it('refuses a name that is not a set in the folder, naming the ones there', () => {
    expect(() => evalFilesOf('kafkajs', present)).to.throw(/kafkajs is not an evaluation set .*mongodb-7\.0\.0\.json/);
    expect(() => evalFilesOf('metrics.ts', present)).to.throw(/not an evaluation set/);
    expect(() => evalFilesOf(' , ', present)).to.throw(/names no evaluation set/);
  });
});
