import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import type { Db } from 'mongodb';
import type { IntegrationDeps } from '../../../services/integration/app/deps.ts';
import { generateTests, type GenerateAnswer } from '../../../services/integration/app/generate-tests.ts';
import { generateUnitTests } from '../../../services/integration/generate/unit/generate-unit-tests.ts';
import { generationPool } from '../../../services/integration/generate/unit/generation-pool.ts';
import { generateInput } from '../../../services/integration/input.ts';
import { HttpError } from '../../../services/platform/http/errors.ts';
import { connectMongo, type MongoHandle } from '../../../services/platform/mongo.ts';
import { WorkBudgetError, WorkQueueFull, type WorkPool } from '../../../services/platform/work/work-pool.ts';
import type { RagDeps } from '../../../services/rag/app/deps.ts';
import type { Caller } from '../../../services/premium/caller.ts';
import type { PushedSources } from '../../../services/rag/pushed-sources.ts';
import type { Retrieval, SearchHit } from '../../../services/rag/retrieval.ts';
import type { VisionDeps } from '../../../services/vision/engine.ts';
import { projectIndexedCollection } from '../../support/indexed-collection.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';

const FIXTURE = new URL('../../fixtures/ui-kit/', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, FIXTURE), 'utf8');

/**
 * A module the solver spends seconds on: every guard compares a product of the arguments with a
 * value no candidate reaches, so each one spends the search's whole budget, and every simulation
 * walks the guards before it. Normal TypeScript; nothing about it is malformed.
 */
function manyGuards(name: string, n: number): string {
  const lines = [`export function ${name}(a: number, b: number, c: number, d: number, e: number, f: number): number {`];
  for (let i = 0; i < n; i++) lines.push(`  if (a * b + c * d - e * f === ${i}.5 + a * 7919) throw new RangeError('r${i}');`);
  lines.push('  return a + b + c + d + e + f;', '}');
  return lines.join('\n');
}

const hit = (symbol: string, file: string, language: string): SearchHit => ({
  id: `${file}#${symbol}`,
  content: '',
  score: 1,
  metadata: { file, type: 'function', startLine: 1, endLine: 2, language, symbol },
});

/**
 * POST /api/integration/generate's unit generation runs on the generation pool's worker thread, not
 * on the loop that serves requests: the loop keeps turning while a heavy module is generated for,
 * a module over the budget is answered 422, and the pool's refusals are 429 and 503. Real Mongo for
 * the collection and the generations projection; the index and the pushed sources are stand-ins
 * that hand over the module's text.
 */
describe('integration generate: unit tests are generated off the serving loop (integration)', function () {
  this.timeout(60_000);
  let mongo: MongoHandle;
  let db: Db;
  const caller: Caller = { customerId: `cust-${randomUUID()}`, keyHash: null };
  const files = new Map<string, string>([
    ['package.json', read('package.json')],
    ['src/cart/quantity.js', read('src/cart/quantity.js')],
    ['src/shop.js', read('src/shop.js')],
    ['src/components/add-to-cart-button.js', read('src/components/add-to-cart-button.js')],
    ['src/pick.ts', manyGuards('pick', 80)],
    ['src/huge.ts', manyGuards('huge', 300)],
    ['src/tiny.ts', "export function tiny(n: number): number {\n  if (n < 0) throw new RangeError('negative');\n  return n;\n}"],
  ]);
  const definitions: Record<string, SearchHit> = {
    clampQuantity: hit('clampQuantity', 'src/cart/quantity.js', 'javascript'),
    pick: hit('pick', 'src/pick.ts', 'typescript'),
    huge: hit('huge', 'src/huge.ts', 'typescript'),
    tiny: hit('tiny', 'src/tiny.ts', 'typescript'),
    helper: hit('helper', 'src/tiny.ts', 'typescript'),
    mountShop: hit('mountShop', 'src/shop.js', 'javascript'),
    AddToCartButton: hit('AddToCartButton', 'src/components/add-to-cart-button.js', 'javascript'),
  };
  const mentions: Record<string, SearchHit[]> = { AddToCartButton: [hit('AddToCartButton', 'src/shop.js', 'javascript')] };

  /** Heartbeats of the serving loop, and the count when the last file was read and when the answer was published. */
  let beats = 0;
  let beating = false;
  let beatsAtLastRead = -1;
  let beatsAtPublish = -1;
  const beat = (): void => {
    if (!beating) return;
    beats++;
    setImmediate(beat);
  };

  let rag: RagDeps;
  let pool: WorkPool;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const env = await useStack();
    mongo = await connectMongo(env.MONGODB_URI, `test_${randomUUID().slice(0, 8)}`);
    db = mongo.db;
    await projectIndexedCollection(db, {
      customerId: caller.customerId,
      collectionName: 'kit',
      projectPath: null,
      file: 'src/pick.ts',
      topic: 'generate-test',
    });

    const retrieval: Pick<Retrieval, 'lookup'> = {
      lookup: async (_id, name) => {
        const found = definitions[name];
        return { definitions: found ? [found] : [], mentions: mentions[name] ?? [] };
      },
    };
    // Every file the generation reads is pushed: no folder is read, so nothing but these promises stands between the reads and the generation.
    const pushed: Pick<PushedSources, 'get'> = {
      get: async (_id, path) => {
        beatsAtLastRead = beats;
        const content = files.get(path);
        return content === undefined ? null : { path, hash: 'h', content };
      },
    };
    let offset = 0;
    rag = {
      db,
      publisher: {
        publishOrdered: async (events) => {
          beatsAtPublish = beats;
          return events.map(() => ({ topic: 'integration.events', partition: 0, offset: String(offset++) }));
        },
      },
      usagePublisher: { publish: async () => undefined },
      config: {
        urls: { pricing: 'https://svc.example/pricing' },
        rag: { maxFileBytes: 1_000_000, indexEngine: { kind: 'sqlite' } },
      } as RagDeps['config'],
      retrieval: retrieval as Retrieval,
      pushed: pushed as PushedSources,
    };
  });

  beforeEach(() => {
    pool = generationPool();
  });

  afterEach(async () => {
    beating = false;
    await pool.close();
  });

  after(async () => {
    await db?.dropDatabase().catch(() => undefined);
    await mongo?.client.close();
  });

  const depsWith = (generation: IntegrationDeps['generation']): IntegrationDeps => ({
    rag,
    vision: {} as VisionDeps,
    llm: null,
    generation,
  });
  const generate = (generation: IntegrationDeps['generation'], body: Record<string, unknown>): Promise<GenerateAnswer> =>
    generateTests(depsWith(generation), caller, generateInput.parse({ collectionName: 'kit', testType: 'unit', ...body }), randomUUID());
  const refusal = async (generation: IntegrationDeps['generation'], body: Record<string, unknown>): Promise<HttpError> => {
    try {
      await generate(generation, body);
    } catch (err) {
      if (err instanceof HttpError) return err;
      throw err;
    }
    throw new Error('expected the generation to be refused');
  };

  it("answers what the generator writes, run on the pool's thread as the customer", async () => {
    const tenants: string[] = [];
    const spy: IntegrationDeps['generation'] = {
      run: (task, input, options) => {
        tenants.push(options.tenant);
        return pool.run(task, input, options);
      },
    };
    const answer = await generate(spy, { component: 'clampQuantity', coverage: 'comprehensive' });
    const direct = await generateUnitTests({
      component: 'clampQuantity',
      source: read('src/cart/quantity.js'),
      modulePath: 'src/cart/quantity.js',
      testType: 'unit',
      coverage: 'comprehensive',
      framework: 'mocha', // the fixture's package.json has mocha
      moduleSystem: 'esm',
      usages: [],
    });
    expect({
      files: answer.files,
      framework: answer.framework,
      runCommand: answer.runCommand,
      cases: answer.cases,
      skipped: answer.skipped,
    }).to.deep.equal(direct);
    expect(answer.source).to.deep.equal({ file: 'src/cart/quantity.js', startLine: 1, endLine: 2 });

    // An integration test reads the files that use the component: they cross to the thread too.
    const integration = await generate(spy, { component: 'AddToCartButton', testType: 'integration', coverage: 'comprehensive' });
    const directIntegration = await generateUnitTests({
      component: 'AddToCartButton',
      source: read('src/components/add-to-cart-button.js'),
      modulePath: 'src/components/add-to-cart-button.js',
      testType: 'integration',
      coverage: 'comprehensive',
      framework: 'mocha',
      moduleSystem: 'esm',
      usages: [{ path: 'src/shop.js', source: read('src/shop.js') }],
    });
    expect({
      files: integration.files,
      framework: integration.framework,
      runCommand: integration.runCommand,
      cases: integration.cases,
      skipped: integration.skipped,
    }).to.deep.equal(directIntegration);
    expect(integration.skipped.some((s) => s.reason.startsWith('the call at src/shop.js:8'))).to.equal(true);
    expect(tenants).to.deep.equal([caller.customerId, caller.customerId]);
  });

  it("keeps the serving loop turning while a heavy module's tests are generated", async () => {
    // The grammar and the thread loaded first: what is left is the generation's own work.
    await generate(pool, { component: 'tiny', coverage: 'exhaustive' });
    beats = 0;
    beating = true;
    setImmediate(beat);
    const answer = await generate(pool, { component: 'pick', coverage: 'exhaustive' });
    beating = false;
    expect(answer.skipped.length).to.be.greaterThan(50);
    // Between the last file read and the answer's event, the loop ran its other work: on the loop
    // itself the generation would be one unbroken turn, and no heartbeat could come in between.
    expect(beatsAtPublish - beatsAtLastRead, 'heartbeats while generating').to.be.greaterThan(1);
  });

  it('answers 422 GENERATION_TOO_COSTLY for a module past the time budget, and the next generation still runs', async () => {
    pool = generationPool({ timeoutMs: 1000 });
    const error = await refusal(pool, { component: 'huge', coverage: 'exhaustive' });
    expect(error).to.include({ status: 422, code: 'GENERATION_TOO_COSTLY' });
    expect(error.message).to.equal(
      'generating tests for this code ran past its time budget: generate for a smaller module, or at a lower coverage',
    );
    // Without the heavy work the same pool, on a fresh thread, answers.
    expect((await generate(pool, { component: 'tiny' })).cases.length).to.be.greaterThan(0);
  });

  it("passes the generator's own refusals through as before (404, 422)", async () => {
    const missing = await refusal(pool, { component: 'helper' });
    expect(missing).to.include({ status: 404, code: 'COMPONENT_NOT_FOUND', message: 'src/tiny.ts does not export helper' });
    const dom = await refusal(pool, { component: 'mountShop' });
    expect(dom).to.include({
      status: 422,
      code: 'NOT_SUPPORTED',
      message: "importing src/shop.js runs browser code at line 13: needs a browser DOM: generate an e2e test with the page's url",
    });
  });

  it('answers 429 when the customer has too many generations waiting, 503 when the pool is stopping, 422 past the memory budget', async () => {
    const full: IntegrationDeps['generation'] = { run: () => Promise.reject(new WorkQueueFull('test generation')) };
    const busy = await refusal(full, { component: 'tiny' });
    expect(busy).to.include({ status: 429, code: 'TOO_BUSY' });
    expect(busy.headers).to.deep.equal({ 'Retry-After': '5' });

    await pool.close();
    expect(await refusal(pool, { component: 'tiny' })).to.include({ status: 503, code: 'UNAVAILABLE' });

    const hog: IntegrationDeps['generation'] = {
      run: () => Promise.reject(new WorkBudgetError('memory', 'the test generation task used more than its 256 MB of memory')),
    };
    const memory = await refusal(hog, { component: 'tiny' });
    expect(memory).to.include({
      status: 422,
      code: 'GENERATION_TOO_COSTLY',
      message: 'generating tests for this code ran past its memory budget: generate for a smaller module, or at a lower coverage',
    });
  });
});
