/**
 * For iterating on ranking only (never a reported figure): indexes development sets once into
 * SQLite with the embedding cache, then scores each variant of the search options given in
 * TUNE_VARIANTS (a JSON object: name -> SearchOptions), file and line level.
 *
 *   TUNE_VARIANTS='{"off":{"nearCopyDecay":1}}' node bench/rag-eval/tune.ts undici-7.29.0-package zap-1.27.0
 *
 * A held-out set is refused: nothing is chosen on it.
 */

import type { SearchHit, SearchOptions } from '../../services/rag/index-store/types.ts';
import { developmentEmbedders, developmentSet, withIndexedSet } from './development-index.ts';
import { setName } from './eval-set.ts';
import { outcome, score, type QueryOutcome } from './metrics.ts';

const variants = JSON.parse(process.env.TUNE_VARIANTS ?? '{"default":{}}') as Record<string, SearchOptions>;
const embedders = await developmentEmbedders();
const { onnx } = embedders;
const totals: Record<string, { file5: number; line5: number; mrr: number; n: number }> = {};
try {
  for (const arg of process.argv.slice(2)) {
    const dev = developmentSet(arg);
    const { set } = dev;
    await withIndexedSet(dev, embedders, async (index) => {
      const vectors = new Map<string, Float32Array>();
      for (const q of set.queries) vectors.set(q.id, (await onnx.embed([q.query], 'query'))[0] as Float32Array);
      console.log(`${setName(set)}: ${set.queries.length} queries`);
      for (const [name, options] of Object.entries(variants)) {
        const line: QueryOutcome[] = [];
        const fileLevel: QueryOutcome[] = [];
        const conceptual: QueryOutcome[] = [];
        const misses: string[] = [];
        for (const q of set.queries) {
          const hits: SearchHit[] = await index.search(q.query, vectors.get(q.id) as Float32Array, 10, options);
          const ranges = hits.map((h) => ({ file: h.metadata.file, startLine: h.metadata.startLine, endLine: h.metadata.endLine }));
          line.push(outcome(ranges, q.answers));
          const f = outcome(ranges, q.answers, true);
          fileLevel.push(f);
          if (q.conceptual) conceptual.push(f);
          if (f.rank === undefined || f.rank > 5)
            misses.push(
              `${q.id}:${f.rank ?? '-'}:${ranges
                .slice(0, 3)
                .map((r) => r.file)
                .join(',')}`,
            );
        }
        const [fs, ls, cs] = [score(fileLevel), score(line), score(conceptual)];
        const t = (totals[name] ??= { file5: 0, line5: 0, mrr: 0, n: 0 });
        t.file5 += fs.recallAt5;
        t.line5 += ls.recallAt5;
        t.mrr += fs.mrr;
        t.n += 1;
        console.log(
          `  ${name.padEnd(24)} file R@5 ${fs.recallAt5.toFixed(2)} R@10 ${fs.recallAt10.toFixed(2)} MRR ${fs.mrr.toFixed(2)}  conceptual R@5 ${cs.recallAt5.toFixed(2)}  line R@5 ${ls.recallAt5.toFixed(2)} MRR ${ls.mrr.toFixed(2)}`,
        );
        if (process.env.TUNE_MISSES === '1') console.log(`     misses: ${misses.join('  ')}`);
      }
    });
  }
  console.log('mean over sets');
  for (const [name, t] of Object.entries(totals)) {
    console.log(
      `  ${name.padEnd(24)} file R@5 ${(t.file5 / t.n).toFixed(3)}  line R@5 ${(t.line5 / t.n).toFixed(3)}  file MRR ${(t.mrr / t.n).toFixed(3)}`,
    );
  }
} finally {
  await onnx.close();
}
