/**
 * Learning the hybrid search's weights (the features of rank-features.ts) on the development
 * sets, with cross-validation across code bases. Never a reported figure, and a held-out set is
 * refused: nothing is learned or chosen on it.
 *
 *   node bench/rag-eval/learn-rank.ts mongodb-7.0.0 undici-7.29.0 undici-7.29.0-package zap-1.27.0
 *
 * 1. Each set is indexed once into SQLite (document vectors from the bench's embedding cache) and,
 *    for every question, the three single lists are kept with the line range of every candidate
 *    (~/.cache/svc/bench-rag/lists-<set>.json, reused while the set, the model and the chunker agree).
 * 2. Folds are code bases, not sets: undici's two sets ask the same questions of the same code, so
 *    they are left out together. Per fold, coordinate ascent (Metzler & Croft 2007) from the shipped
 *    fusion's weights maximises the mean over the training sets of file R@5 + line R@5 + file MRR +
 *    line MRR; the left-out code base is scored with the weights learned without it.
 * 3. The weights learned on every development set are printed: what would ship.
 *
 * Besides the features of rank-features.ts, two are tried here only: mentions between a candidate
 * and the shipped fusion's first 20 hits (`graphIn`, `graphOut`). `LEARN_SWEEP='graphIn:0.1,0.2'`
 * also scores the shipped weights with one feature set to each value. Results: README.md, "Learned
 * weights and a mention graph".
 */

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileKindOf, weightsFor } from '../../services/rag/index-store/file-priors.ts';
import { looksLikeCode } from '../../services/rag/index-store/query-profile.ts';
import { DEFAULT_CANDIDATES, NAMED_CANDIDATES } from '../../services/rag/index-store/store.ts';
import type { RankedChunk } from '../../services/rag/index-store/types.ts';
import { BENCH_CACHE_DIR, developmentEmbedders, developmentSet, withIndexedSet } from './development-index.ts';
import { type EvalQuery, setName } from './eval-set.ts';
import { type Candidate, type CandidateLists, candidatesOf, FEATURES, linearScore, RRF_WEIGHTS, weightVector } from './rank-features.ts';
import { outcome, type RangeHit, score } from './metrics.ts';

interface QueryLists {
  readonly id: string;
  readonly conceptual: boolean;
  readonly lists: CandidateLists;
  /** line range of every candidate, by row id */
  readonly ranges: Record<number, RangeHit>;
  /** each candidate's symbol's last segment (`ConnectionPool.checkOut` -> `checkOut`), by row id */
  readonly symbols: Record<number, string>;
  /** the identifiers each candidate's text mentions, by row id */
  readonly mentions: Record<number, string[]>;
  readonly answers: EvalQuery['answers'];
}

interface SetLists {
  readonly name: string;
  /** the code base: sets over the same code are one fold */
  readonly codeBase: string;
  readonly queries: QueryLists[];
}

async function listsOf(args: string[]): Promise<SetLists[]> {
  const embedders = await developmentEmbedders();
  const { onnx } = embedders;
  const out: SetLists[] = [];
  try {
    for (const arg of args) {
      const dev = developmentSet(arg);
      const { file, set } = dev;
      const codeBase = `${set.corpus.package}@${set.corpus.version}`;
      const key = createHash('sha256')
        .update(readFileSync(file))
        .update(onnx.folder.manifest.name)
        .update('symbols+mentions')
        .update(readFileSync(new URL('../../services/rag/chunking/code-chunker.ts', import.meta.url)))
        .digest('hex')
        .slice(0, 16);
      const saved = join(BENCH_CACHE_DIR, `lists-${setName(set).replace(/[^\w.-]+/g, '_')}-${key}.json`);
      if (existsSync(saved)) {
        out.push(JSON.parse(readFileSync(saved, 'utf8')) as SetLists);
        console.log(`${setName(set)}: lists from ${saved}`);
        continue;
      }
      const started = Date.now();
      await withIndexedSet(dev, embedders, async (index) => {
        console.log(`${setName(set)}: indexed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
        const queries: QueryLists[] = [];
        for (const q of set.queries) {
          const vector = (await onnx.embed([q.query], 'query'))[0] as Float32Array;
          const strip = (rs: RankedChunk[]) => rs.map(({ rowId, path, ordinal, score }) => ({ rowId, path, ordinal, score }));
          const named = strip(await index.searchNamed(q.query, NAMED_CANDIDATES));
          const lists: CandidateLists = {
            query: q.query,
            codeQuery: named.length > 0 || looksLikeCode(q.query),
            bm25: strip(await index.searchBm25(q.query, DEFAULT_CANDIDATES)),
            vector: strip(await index.searchVector(vector, DEFAULT_CANDIDATES)),
            named,
          };
          const ids = [...new Set([...lists.bm25, ...lists.vector, ...lists.named].map((r) => r.rowId))];
          const hits = await index.hits(ids.map((rowId) => ({ rowId, score: 0 })));
          const ranges: Record<number, RangeHit> = {};
          const symbols: Record<number, string> = {};
          const mentions: Record<number, string[]> = {};
          hits.forEach((h, i) => {
            const id = ids[i] as number;
            ranges[id] = { file: h.metadata.file, startLine: h.metadata.startLine, endLine: h.metadata.endLine };
            const last = h.metadata.symbol?.split(/[.#:]/).at(-1);
            if (last) symbols[id] = last;
            mentions[id] = [...new Set(h.content.match(/[A-Za-z_$][\w$]{3,}/g) ?? [])];
          });
          queries.push({ id: q.id, conceptual: q.conceptual, lists, ranges, symbols, mentions, answers: q.answers });
        }
        const lists: SetLists = { name: setName(set), codeBase, queries };
        mkdirSync(BENCH_CACHE_DIR, { recursive: true });
        writeFileSync(saved, JSON.stringify(lists));
        out.push(lists);
      });
    }
  } finally {
    await onnx.close();
  }
  return out;
}

/** A question's candidates with the file prior each gets, computed once. */
interface Prepared {
  readonly query: QueryLists;
  readonly candidates: Candidate[];
  readonly prior: Float64Array;
}

/** Features tried here only, after the service's: mentions between a candidate and the first hits. */
const EXTRA = ['graphIn', 'graphOut'] as const;
const NAMES = [...FEATURES, ...EXTRA];
const GRAPH_TOP = 20;

function prepare(q: QueryLists): Prepared {
  const base = candidatesOf(q.lists);
  const kinds = weightsFor(q.lists.query);
  const prior = Float64Array.from(base, (c) => kinds[fileKindOf(c.path)]);
  const shipped = weightVector(RRF_WEIGHTS);
  const order = base
    .map((c, i) => ({ c, s: linearScore(c.features, shipped) * (prior[i] as number) }))
    .sort((a, b) => b.s - a.s || a.c.order - b.c.order)
    .slice(0, GRAPH_TOP)
    .map(({ c }) => c.rowId);
  const norm = order.reduce((sum, _, i) => sum + 1 / (i + 1), 0);
  const mentions = new Map(Object.entries(q.mentions).map(([id, m]) => [Number(id), new Set(m)]));
  const candidates = base.map((c) => {
    let into = 0;
    let out = 0;
    const symbol = q.symbols[c.rowId];
    const own = mentions.get(c.rowId);
    order.forEach((d, i) => {
      if (d === c.rowId) return;
      const other = q.symbols[d];
      if (symbol && symbol !== other && mentions.get(d)?.has(symbol)) into += 1 / (i + 1);
      if (other && other !== symbol && own?.has(other)) out += 1 / (i + 1);
    });
    const features = new Float64Array(NAMES.length);
    features.set(c.features);
    features[FEATURES.length] = into / norm;
    features[FEATURES.length + 1] = out / norm;
    return { ...c, features };
  });
  return { query: q, candidates, prior };
}

function startWeights(): Float64Array {
  const w = new Float64Array(NAMES.length);
  w.set(weightVector(RRF_WEIGHTS));
  return w;
}

interface Figures {
  file5: number;
  line5: number;
  fileMrr: number;
  lineMrr: number;
  conceptual5: number;
}

function evaluate(set: Prepared[], weights: Float64Array): Figures {
  const file = [];
  const line = [];
  const conceptual = [];
  for (const p of set) {
    const scored = p.candidates.map((c, i) => ({ c, s: linearScore(c.features, weights) * (p.prior[i] as number) }));
    scored.sort((a, b) => b.s - a.s || a.c.order - b.c.order);
    const top = scored.slice(0, 10).map(({ c }) => p.query.ranges[c.rowId] as RangeHit);
    const f = outcome(top, p.query.answers, true);
    file.push(f);
    line.push(outcome(top, p.query.answers));
    if (p.query.conceptual) conceptual.push(f);
  }
  const [fs, ls, cs] = [score(file), score(line), score(conceptual)];
  return { file5: fs.recallAt5, line5: ls.recallAt5, fileMrr: fs.mrr, lineMrr: ls.mrr, conceptual5: cs.recallAt5 };
}

const objective = (f: Figures) => f.file5 + f.line5 + f.fileMrr + f.lineMrr;

function meanObjective(sets: Prepared[][], weights: Float64Array): number {
  return sets.reduce((sum, s) => sum + objective(evaluate(s, weights)), 0) / sets.length;
}

/** Coordinate ascent; the vector weight stays 1 (the score's scale is free). */
function learn(sets: Prepared[][]): Float64Array {
  const w = startWeights();
  const fixed = FEATURES.indexOf('vector');
  let best = meanObjective(sets, w);
  const steps = [-1, -0.5, -0.25, -0.1, -0.05, 0.05, 0.1, 0.25, 0.5, 1];
  for (let round = 0; round < 25; round++) {
    let improved = false;
    for (let i = 0; i < w.length; i++) {
      if (i === fixed) continue;
      const start = w[i] as number;
      let chosen = start;
      for (const step of steps) {
        w[i] = start + step;
        const value = meanObjective(sets, w);
        // Ties go to the smaller move: a step must earn its place.
        if (value > best + 1e-9 || (Math.abs(value - best) <= 1e-9 && Math.abs(start + step - start) < Math.abs(chosen - start))) {
          if (value > best + 1e-9) improved = true;
          best = Math.max(best, value);
          chosen = start + step;
        }
      }
      w[i] = chosen;
    }
    if (!improved) break;
  }
  return w;
}

const fmt = (f: Figures) =>
  `file R@5 ${f.file5.toFixed(2)}  MRR ${f.fileMrr.toFixed(2)}  conceptual R@5 ${f.conceptual5.toFixed(2)}  line R@5 ${f.line5.toFixed(2)}  line MRR ${f.lineMrr.toFixed(2)}`;

const sets = await listsOf(process.argv.slice(2)).catch((err: unknown) => {
  console.error(`learn-rank: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
const prepared = new Map(sets.map((s) => [s.name, s.queries.map(prepare)]));
const codeBases = [...new Set(sets.map((s) => s.codeBase))];
if (codeBases.length < 2) {
  console.error(`learn-rank: cross-validation needs development sets over two code bases or more; given ${codeBases.join(', ') || 'none'}`);
  process.exit(64);
}
const shipped = startWeights();
const totals = { before: 0, after: 0 };
console.log('\ncross-validation: each code base scored with weights learned on the others');
for (const left of codeBases) {
  const training = sets.filter((s) => s.codeBase !== left).map((s) => prepared.get(s.name) as Prepared[]);
  const w = learn(training);
  console.log(`  without ${left}: ${NAMES.map((n, i) => `${n} ${(w[i] as number).toFixed(2)}`).join(', ')}`);
  for (const s of sets.filter((x) => x.codeBase === left)) {
    const p = prepared.get(s.name) as Prepared[];
    const [before, after] = [evaluate(p, shipped), evaluate(p, w)];
    totals.before += objective(before);
    totals.after += objective(after);
    console.log(`    ${s.name.padEnd(28)} shipped ${fmt(before)}`);
    console.log(`    ${''.padEnd(28)} learned ${fmt(after)}`);
  }
}
console.log(
  `  mean objective over sets: shipped ${(totals.before / sets.length).toFixed(3)}, learned ${(totals.after / sets.length).toFixed(3)}`,
);
const all = learn([...prepared.values()]);
console.log(`\nlearned on every development set: ${NAMES.map((n, i) => `${n}: ${(all[i] as number).toFixed(2)}`).join(', ')}`);
for (const s of sets) console.log(`  ${s.name.padEnd(28)} ${fmt(evaluate(prepared.get(s.name) as Prepared[], all))}`);

// LEARN_SWEEP='graphIn:0.1,0.2': the shipped weights with one feature set to each value, every set.
const sweep = process.env.LEARN_SWEEP;
if (sweep) {
  const [name, values] = sweep.split(':') as [string, string];
  const at = NAMES.indexOf(name as (typeof NAMES)[number]);
  if (at < 0) throw new Error(`LEARN_SWEEP: no feature ${name}; features: ${NAMES.join(', ')}`);
  for (const value of values.split(',').map(Number)) {
    const w = startWeights();
    w[at] = value;
    console.log(`\n${name} = ${value}`);
    for (const s of sets) console.log(`  ${s.name.padEnd(28)} ${fmt(evaluate(prepared.get(s.name) as Prepared[], w))}`);
  }
}
