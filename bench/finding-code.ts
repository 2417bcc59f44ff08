/**
 * How often a finding's `code` names the file that really renders its element, on the fixture
 * projects of test/support/finding-code-fixtures.ts (written by us, as is their labelled set: which
 * file renders each element). Per project: the page is captured and analysed (comprehensive) as the
 * service does, the project's folder indexed into a throwaway SQLite index with the service's
 * retrieval engine and model, and each finding that names an element traced as the service traces it
 * (services/vision/app/code-links.ts, services/integration/code/element-code.ts). Prints each finding
 * with the expected file and its rank, then top-1 and top-3 file hit rates and how many findings got links.
 *
 *   npm run bench:finding-code
 *
 * Env: MONGODB_URI (the index job reads pushed sources from it; unset, a throwaway one is started),
 * CHROMIUM_PATH as for the service, BENCH_VERBOSE=1 (every finding's links).
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { collectionSearch } from '../services/integration/code/element-code.ts';
import { parseAllowList } from '../services/platform/allow-list.ts';
import { createLogger } from '../services/platform/logger.ts';
import { SqliteIndexes } from '../services/rag/index-store/sqlite-indexes.ts';
import { LocalRetrieval } from '../services/rag/local-retrieval.ts';
import { PushedSources } from '../services/rag/pushed-sources.ts';
import { analyze } from '../services/vision/analysis/analyze.ts';
import { inspectPage } from '../services/vision/analysis/page-report.ts';
import type { ElementClue } from '../services/vision/analysis/types.ts';
import { clueFromSelector, linkFindings } from '../services/vision/app/code-links.ts';
import { BrowserPool } from '../services/vision/browser/browser-pool.ts';
import { capture } from '../services/vision/browser/capture.ts';
import { resolveChromiumPath } from '../services/vision/browser/chromium-path.ts';
import { ANALYSIS_FIXTURE_DIR, FIXTURE_PROJECTS, shopWithPhotoDefect, type FixtureProject } from '../test/support/finding-code-fixtures.ts';
import { startFixtureSite } from '../test/integration/vision/fixture-site.ts';
import { startUiKitSite } from '../test/support/ui-kit-site.ts';
import { runMain } from './run-main.ts';
import { benchStack } from './throwaway-stack.ts';

const out = (line: string) => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);

interface Tally {
  pointing: number;
  linked: number;
  top1: number;
  top3: number;
}

const pct = (n: number, of: number) => (of === 0 ? 'n/a' : `${((100 * n) / of).toFixed(0)}% (${n}/${of})`);

async function main(): Promise<void> {
  const stack = await benchStack({ mongo: true, kafka: false }, err);
  const mongoUri = stack.env.MONGODB_URI;
  const verbose = process.env.BENCH_VERBOSE === '1';
  const dir = mkdtempSync(join(tmpdir(), 'bench-finding-code-'));
  const log = createLogger('warn');
  const mongo = await MongoClient.connect(mongoUri);
  const db = mongo.db(`bench_finding_code_${process.pid}`);
  const retrieval = new LocalRetrieval({
    indexes: new SqliteIndexes({ dataDir: join(dir, 'indexes'), log }),
    modelDir: undefined,
    threads: 1,
    maxFileBytes: 1_000_000,
    cacheEntries: 0,
    work: { threads: 1, memoryMb: 512, fileBudgetMs: 30_000, listBudgetMs: 60_000 },
    log,
  });
  cpSync(ANALYSIS_FIXTURE_DIR, join(dir, 'analysis'), { recursive: true });
  const shopSite = await startUiKitSite(shopWithPhotoDefect(join(dir, 'shop')));
  const fixtureSite = await startFixtureSite();
  const pool = new BrowserPool({
    executablePath: process.env.CHROMIUM_PATH ?? resolveChromiumPath(),
    allowList: parseAllowList(`${shopSite.origin.replace('http://', '')},127.0.0.1:${fixtureSite.port}`),
    maxConcurrent: 1,
  });
  // Each page against its own project, then both pages against one collection holding both
  // projects (13 files: each project's files are the other's distractors).
  cpSync(join(dir, 'shop'), join(dir, 'both', 'shop'), { recursive: true });
  cpSync(join(dir, 'analysis'), join(dir, 'both', 'analysis'), { recursive: true });
  const runs: { project: FixtureProject; collection: string; prefix: string; origin: string }[] = [
    { project: FIXTURE_PROJECTS.shop, collection: 'shop', prefix: '', origin: shopSite.origin },
    { project: FIXTURE_PROJECTS.analysis, collection: 'analysis', prefix: '', origin: fixtureSite.origin },
    { project: FIXTURE_PROJECTS.shop, collection: 'both', prefix: 'shop/', origin: shopSite.origin },
    { project: FIXTURE_PROJECTS.analysis, collection: 'both', prefix: 'analysis/', origin: fixtureSite.origin },
  ];
  const indexedOnce = new Map<string, string>();
  const total: Tally = { pointing: 0, linked: 0, top1: 0, top3: 0 };
  try {
    for (const { project, collection, prefix, origin } of runs) {
      const collectionId = `bench-${collection}`;
      if (!indexedOnce.has(collection)) {
        const indexed = await retrieval.index({
          collectionId,
          tenant: 'bench',
          mode: 'full',
          projectPath: join(dir, collection),
          pushed: new PushedSources(db),
        });
        indexedOnce.set(collection, `${indexed.filesIndexed} files indexed, ${indexed.chunks} chunks`);
      }
      const shot = await capture(
        pool,
        { url: `${origin}${project.page}`, timeoutMs: 30_000, maxBytes: 10_000_000, viewport: { width: 1280, height: 800 } },
        (page, left) => inspectPage(page, left),
      );
      const report = shot.inspection;
      const result = analyze('comprehensive', { report, png: shot.png });
      const clues = new Map<string, ElementClue>((report.clues ?? []).map((c) => [c.selector, c]));
      const started = performance.now();
      const linked = await linkFindings(
        result.findings,
        report.clues ?? [],
        collectionSearch(retrieval, collectionId, collection, 'bench'),
      );
      const ms = performance.now() - started;
      const tally: Tally = { pointing: 0, linked: 0, top1: 0, top3: 0 };
      const name = `${project.name} page, ${collection} collection`;
      out(`\n${name}: ${origin}${project.page}; ${indexedOnce.get(collection)}`);
      for (const f of linked.findings) {
        if (!f.selector) continue;
        tally.pointing++;
        const expected = prefix + project.fileOf(clues.get(f.selector) ?? clueFromSelector(f.selector));
        const files = (f.code ?? []).map((c) => c.file);
        const rank = files.indexOf(expected) + 1;
        if (files.length > 0) tally.linked++;
        if (rank === 1) tally.top1++;
        if (rank >= 1 && rank <= 3) tally.top3++;
        out(
          `  ${rank === 0 ? 'miss' : `#${rank}  `} ${f.type} ${f.selector.slice(0, 60)} -> ${expected}${verbose || rank !== 1 ? `  [${files.join(', ')}]` : ''}`,
        );
      }
      out(
        `  ${name}: ${tally.pointing} findings name an element, ${pct(tally.linked, tally.pointing)} got links; ` +
          `top-1 ${pct(tally.top1, tally.pointing)}, top-3 ${pct(tally.top3, tally.pointing)}; tracing took ${ms.toFixed(0)} ms` +
          (linked.summary.reason ? ` (${linked.summary.reason})` : ''),
      );
      for (const k of ['pointing', 'linked', 'top1', 'top3'] as const) total[k] += tally[k];
    }
    out(
      `\nall: ${total.pointing} findings name an element, ${pct(total.linked, total.pointing)} got links; ` +
        `top-1 file ${pct(total.top1, total.pointing)}, top-3 file ${pct(total.top3, total.pointing)}`,
    );
    out('(fixtures and labels written by us: test/support/finding-code-fixtures.ts)');
  } finally {
    await pool.close();
    await shopSite.close();
    await fixtureSite.close();
    await retrieval.close();
    await db.dropDatabase().catch(() => undefined);
    await mongo.close();
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

void runMain(main, err);
