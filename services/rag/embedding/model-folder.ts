import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join, normalize, resolve, sep } from 'node:path';
import { z } from 'zod';
import { WordPieceTokenizer } from './tokenizer.ts';
import { parseVocabularyFile, VocabularyError } from './vocabulary.ts';

/**
 * A model folder: model.json (the manifest below), the ONNX file and the tokenizer file it names.
 * deploy/local/models/provision.sh makes the default one; anyone can bring another model in the
 * same format (see README.md beside this file).
 */

export const MANIFEST_FILE = 'model.json';

/** Must match the name and version deploy/local/models/provision.sh provisions. */
export const DEFAULT_MODEL = 'all-minilm-l6-v2-int8-1.2.0';

export function defaultModelDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.SVC_CACHE_DIR || join(homedir(), '.cache', 'svc'), 'models', DEFAULT_MODEL);
}

const fileInFolder = z
  .string()
  .min(1)
  .refine((f) => !isAbsolute(f) && !normalize(f).split(sep).includes('..'), { error: 'must be a path inside the model folder' });

const manifestSchema = z.object({
  format: z.literal('svc-text-embedding', { error: 'must be "svc-text-embedding"' }),
  formatVersion: z.literal(1, { error: 'must be 1' }),
  name: z.string().min(1),
  license: z.string().optional(),
  onnx: z.object({
    file: fileInFolder,
    /** The model output to pool; the first output when absent. */
    output: z.string().min(1).optional(),
    /**
     * onnxruntime graph optimizers to leave out at load, by name (onnxruntime ignores a name it does
     * not know). Part of the model: an optimizer changes the arithmetic, so the vectors change with it.
     */
    disabledOptimizers: z
      .array(z.string().regex(/^[A-Za-z][A-Za-z0-9]*$/, { error: 'must be an optimizer name such as SkipLayerNormFusion' }))
      .max(32)
      .default([]),
  }),
  dimensions: z.number().int().positive(),
  /** "none": the model already outputs one vector per text ([batch, dimensions]). */
  pooling: z.enum(['mean', 'cls', 'none']),
  normalize: z.boolean(),
  /** Tokens per text including [CLS] and [SEP]; longer texts are truncated. */
  maxSequenceLength: z.number().int().min(3).max(8192),
  tokenizer: z.object({
    type: z.literal('bert-wordpiece', { error: 'only "bert-wordpiece" is supported' }),
    /** tokenizer.json (Hugging Face) or vocab.txt. */
    file: fileInFolder,
    lowercase: z.boolean(),
    /** Defaults to lowercase, as for BERT's uncased models. */
    stripAccents: z.boolean().optional(),
    handleChineseChars: z.boolean().default(true),
  }),
  /** Prepended to each text before tokenization (e5: "query: " / "passage: "). */
  prefixes: z.object({ query: z.string(), document: z.string() }).default({ query: '', document: '' }),
  /** When given, each named file must have this sha256 (a damaged cache fails at load, not with odd vectors). */
  sha256: z.record(fileInFolder, z.string().regex(/^[0-9a-f]{64}$/, { error: 'must be 64 lowercase hex digits' })).optional(),
});

export type ModelManifest = z.infer<typeof manifestSchema>;

export interface ModelFolder {
  readonly dir: string;
  readonly manifest: ModelManifest;
  readonly onnxPath: string;
  readonly tokenizer: WordPieceTokenizer;
}

export class ModelFolderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelFolderError';
  }
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function requireFile(path: string, what: string): Promise<void> {
  const st = await stat(path).catch(() => undefined);
  if (!st) throw new ModelFolderError(`model folder: missing ${what} ${path}`);
  if (!st.isFile()) throw new ModelFolderError(`model folder: ${what} ${path} is not a file`);
}

export async function readManifest(dir: string): Promise<ModelManifest> {
  const path = join(dir, MANIFEST_FILE);
  await requireFile(path, 'manifest');
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, 'utf8'));
  } catch (e) {
    throw new ModelFolderError(`model folder: ${path} is not JSON (${(e as Error).message})`);
  }
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`);
    throw new ModelFolderError(`model folder: ${path}: ${problems.join('; ')}`);
  }
  return parsed.data;
}

/** Reads and checks a model folder: manifest, files present, checksums, tokenizer. */
export async function readModelFolder(folder: string): Promise<ModelFolder> {
  const dir = resolve(folder);
  const st = await stat(dir).catch(() => undefined);
  if (!st?.isDirectory()) {
    throw new ModelFolderError(
      `model folder ${dir} does not exist (run deploy/local/models/provision.sh, or point the configuration at a folder with ${MANIFEST_FILE})`,
    );
  }
  const manifest = await readManifest(dir);
  const onnxPath = join(dir, manifest.onnx.file);
  const tokenizerPath = join(dir, manifest.tokenizer.file);
  await requireFile(onnxPath, 'ONNX model');
  await requireFile(tokenizerPath, 'tokenizer file');
  for (const [file, want] of Object.entries(manifest.sha256 ?? {})) {
    const path = join(dir, file);
    await requireFile(path, 'file listed in sha256');
    const got = await sha256File(path);
    if (got !== want)
      throw new ModelFolderError(`model folder: ${path} has sha256 ${got}, the manifest says ${want} (damaged or replaced file)`);
  }
  const normalization = {
    lowercase: manifest.tokenizer.lowercase,
    stripAccents: manifest.tokenizer.stripAccents ?? manifest.tokenizer.lowercase,
    handleChineseChars: manifest.tokenizer.handleChineseChars,
  };
  let tokenizer: WordPieceTokenizer;
  try {
    const vocabulary = parseVocabularyFile(tokenizerPath, await readFile(tokenizerPath, 'utf8'), normalization);
    tokenizer = new WordPieceTokenizer(vocabulary, { ...normalization, maxLength: manifest.maxSequenceLength });
  } catch (e) {
    if (e instanceof VocabularyError) throw new ModelFolderError(`model folder: ${e.message}`);
    throw new ModelFolderError(`model folder: ${tokenizerPath}: ${(e as Error).message}`);
  }
  return { dir, manifest, onnxPath, tokenizer };
}
