import { InferenceSession, Tensor } from 'onnxruntime-node';
import { defaultModelDir, type ModelFolder, readModelFolder } from './model-folder.ts';
import { l2Normalize, pool } from './pooling.ts';

export type EmbeddingKind = 'query' | 'document';

export interface Embedder {
  readonly dimensions: number;
  /** One vector per text, in order. Queries and documents may get different prefixes. */
  embed(texts: readonly string[], kind: EmbeddingKind): Promise<Float32Array[]>;
}

export interface OnnxEmbedderOptions {
  /**
   * Threads one inference uses. The default 2 indexes about 1.5x faster than 1 on the 2-core
   * machine (a short query takes about 5 ms either way); set 1 where other work must keep a core.
   */
  readonly intraOpThreads?: number;
  /**
   * Texts per inference. Default 1: the default model quantizes its activations dynamically, with one
   * scale per inference, so texts sharing a batch would change each other's vectors (cosine 0.986 to
   * the text alone) and one customer's query could move another's. Alone is also the fastest here
   * (55 against 49 documents/s at 4; see bench/embedding.ts). A float model may batch safely.
   */
  readonly batchSize?: number;
}

const DEFAULT_INTRA_OP_THREADS = 2;
const DEFAULT_BATCH_SIZE = 1;
const KNOWN_INPUTS = new Set(['input_ids', 'attention_mask', 'token_type_ids']);

/** Text embeddings from an ONNX BERT-style encoder in a model folder (see model-folder.ts). */
export class OnnxEmbedder implements Embedder {
  readonly dimensions: number;
  readonly folder: ModelFolder;
  readonly #session: InferenceSession;
  readonly #output: string;
  readonly #batchSize: number;
  // One inference at a time: two at once would each get the threads of the whole machine.
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(folder: ModelFolder, session: InferenceSession, output: string, batchSize: number) {
    this.folder = folder;
    this.dimensions = folder.manifest.dimensions;
    this.#session = session;
    this.#output = output;
    this.#batchSize = batchSize;
  }

  /** Reads and checks the folder, creates the session once and runs one text to check the output's size. */
  static async load(dir: string = defaultModelDir(), options: OnnxEmbedderOptions = {}): Promise<OnnxEmbedder> {
    const threads = options.intraOpThreads ?? DEFAULT_INTRA_OP_THREADS;
    const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    if (!Number.isInteger(threads) || threads < 1) throw new Error(`intraOpThreads must be a positive integer, got ${threads}`);
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error(`batchSize must be a positive integer, got ${batchSize}`);
    const folder = await readModelFolder(dir);
    const disabled = folder.manifest.onnx.disabledOptimizers;
    const session = await InferenceSession.create(folder.onnxPath, {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      logSeverityLevel: 3,
      ...(disabled.length > 0 ? { extra: { optimization: { disable_specified_optimizers: disabled.join(',') } } } : {}),
    });
    try {
      const unknown = session.inputNames.filter((n) => !KNOWN_INPUTS.has(n));
      if (!session.inputNames.includes('input_ids') || unknown.length > 0) {
        throw new Error(
          `inputs are [${session.inputNames.join(', ')}]; a BERT-style encoder takes input_ids, attention_mask and optionally token_type_ids`,
        );
      }
      const output = folder.manifest.onnx.output ?? session.outputNames[0];
      if (output === undefined || !session.outputNames.includes(output)) {
        throw new Error(`has no output ${output ?? ''} (outputs: ${session.outputNames.join(', ')}); fix onnx.output in the manifest`);
      }
      const embedder = new OnnxEmbedder(folder, session, output, batchSize);
      const [probe] = await embedder.embed(['probe'], 'query');
      if (probe?.length !== folder.manifest.dimensions) {
        throw new Error(`gives vectors of ${probe?.length} dimensions, the manifest says ${folder.manifest.dimensions}`);
      }
      return embedder;
    } catch (e) {
      await session.release();
      throw new Error(`model ${folder.onnxPath}: ${(e as Error).message}`, { cause: e });
    }
  }

  async embed(texts: readonly string[], kind: EmbeddingKind): Promise<Float32Array[]> {
    const prefix = this.folder.manifest.prefixes[kind];
    const encoded = texts.map((text) => this.folder.tokenizer.encode(prefix + text));
    // Texts of similar length share a batch, so little of each batch is padding.
    const order = encoded.map((_, i) => i).sort((a, b) => (encoded[b]?.length ?? 0) - (encoded[a]?.length ?? 0));
    const vectors: Float32Array[] = new Array(texts.length);
    for (let start = 0; start < order.length; start += this.#batchSize) {
      const batch = order.slice(start, start + this.#batchSize);
      const pooled = await this.#serially(() => this.#run(batch.map((i) => encoded[i] ?? [])));
      batch.forEach((i, k) => {
        const vector = pooled[k];
        if (vector) vectors[i] = vector;
      });
    }
    return vectors;
  }

  async close(): Promise<void> {
    await this.#queue.catch(() => undefined);
    await this.#session.release();
  }

  #serially<T>(task: () => Promise<T>): Promise<T> {
    const result = this.#queue.then(task, task);
    this.#queue = result.catch(() => undefined);
    return result;
  }

  async #run(rows: readonly (readonly number[])[]): Promise<Float32Array[]> {
    const width = Math.max(...rows.map((r) => r.length));
    const ids = new BigInt64Array(rows.length * width).fill(BigInt(this.folder.tokenizer.padId));
    const mask = new BigInt64Array(rows.length * width);
    rows.forEach((row, b) => {
      row.forEach((id, t) => {
        ids[b * width + t] = BigInt(id);
        mask[b * width + t] = 1n;
      });
    });
    const dims = [rows.length, width];
    const feeds: Record<string, Tensor> = {
      input_ids: new Tensor('int64', ids, dims),
      attention_mask: new Tensor('int64', mask, dims),
    };
    if (this.#session.inputNames.includes('token_type_ids')) {
      feeds.token_type_ids = new Tensor('int64', new BigInt64Array(rows.length * width), dims);
    }
    const results = await this.#session.run(feeds, [this.#output]);
    const out = results[this.#output];
    if (out?.type !== 'float32') throw new Error(`output ${this.#output} is ${out?.type ?? 'missing'}, expected float32`);
    const vectors = pool(
      { data: out.data as Float32Array, dims: out.dims },
      rows.map((r) => r.length),
      this.folder.manifest.pooling,
    );
    for (const tensor of Object.values(results)) tensor.dispose();
    return this.folder.manifest.normalize ? vectors.map(l2Normalize) : vectors;
  }
}
