import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_MODEL, defaultModelDir, ModelFolderError, readModelFolder } from '../../../services/rag/embedding/model-folder.ts';

const VOCAB = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'retry', '##ing'].join('\n');

function manifest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    format: 'svc-text-embedding',
    formatVersion: 1,
    name: 'tiny',
    onnx: { file: 'model.onnx' },
    dimensions: 4,
    pooling: 'mean',
    normalize: true,
    maxSequenceLength: 16,
    tokenizer: { type: 'bert-wordpiece', file: 'vocab.txt', lowercase: true },
    ...overrides,
  };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a rejection');
}

describe('rag embedding: model folder (unit)', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-model-folder-'));
    writeFileSync(join(dir, 'model.onnx'), 'not really onnx: the folder reader does not open it');
    writeFileSync(join(dir, 'vocab.txt'), VOCAB);
    writeFileSync(join(dir, 'model.json'), JSON.stringify(manifest()));
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (m: Record<string, unknown>) => writeFileSync(join(dir, 'model.json'), JSON.stringify(m));

  it('reads a valid folder, with defaults for what the manifest leaves out', async () => {
    const folder = await readModelFolder(dir);
    expect(folder.onnxPath).to.equal(join(dir, 'model.onnx'));
    expect(folder.manifest.prefixes).to.deep.equal({ query: '', document: '' });
    expect(folder.manifest.tokenizer.handleChineseChars).to.equal(true);
    // stripAccents follows lowercase when absent, so "Retrying" and "Rétrying" are the same tokens.
    expect(folder.tokenizer.encode('Rétrying')).to.deep.equal([2, 5, 6, 3]);
  });

  it('says how to get the default model when the folder does not exist', async () => {
    const e = await rejection(readModelFolder(join(dir, 'nope')));
    expect(e).to.be.instanceOf(ModelFolderError);
    expect(e.message).to.include(join(dir, 'nope')).and.include('provision.sh');
  });

  it('names a missing manifest', async () => {
    unlinkSync(join(dir, 'model.json'));
    expect((await rejection(readModelFolder(dir))).message).to.equal(`model folder: missing manifest ${join(dir, 'model.json')}`);
  });

  it('names a manifest that is not JSON', async () => {
    writeFileSync(join(dir, 'model.json'), '{ "format": ');
    expect((await rejection(readModelFolder(dir))).message).to.match(/model\.json is not JSON/);
  });

  it('names every bad field of the manifest', async () => {
    write(manifest({ pooling: 'max', dimensions: 0 }));
    const message = (await rejection(readModelFolder(dir))).message;
    expect(message).to.include(join(dir, 'model.json')).and.include('pooling').and.include('dimensions');
  });

  it('reads the optimizers to leave out, none when absent, and refuses a name that could smuggle another setting', async () => {
    expect((await readModelFolder(dir)).manifest.onnx.disabledOptimizers).to.deep.equal([]);
    write(manifest({ onnx: { file: 'model.onnx', disabledOptimizers: ['SkipLayerNormFusion', 'GeluFusion'] } }));
    expect((await readModelFolder(dir)).manifest.onnx.disabledOptimizers).to.deep.equal(['SkipLayerNormFusion', 'GeluFusion']);
    // The names are joined with commas into one onnxruntime setting.
    write(manifest({ onnx: { file: 'model.onnx', disabledOptimizers: ['SkipLayerNormFusion,AttentionFusion'] } }));
    expect((await rejection(readModelFolder(dir))).message).to.match(/onnx\.disabledOptimizers\.0 must be an optimizer name/);
  });

  it('refuses files outside the folder', async () => {
    write(manifest({ onnx: { file: '../model.onnx' } }));
    expect((await rejection(readModelFolder(dir))).message).to.match(/onnx\.file must be a path inside the model folder/);
  });

  it('names a missing ONNX file', async () => {
    unlinkSync(join(dir, 'model.onnx'));
    expect((await rejection(readModelFolder(dir))).message).to.equal(`model folder: missing ONNX model ${join(dir, 'model.onnx')}`);
  });

  it('names a missing tokenizer file', async () => {
    unlinkSync(join(dir, 'vocab.txt'));
    expect((await rejection(readModelFolder(dir))).message).to.equal(`model folder: missing tokenizer file ${join(dir, 'vocab.txt')}`);
  });

  it('names a tokenizer file without the special tokens', async () => {
    writeFileSync(join(dir, 'vocab.txt'), 'retry\n');
    expect((await rejection(readModelFolder(dir))).message).to.equal(
      `model folder: ${join(dir, 'vocab.txt')}: the vocabulary has no [UNK] token`,
    );
  });

  it('checks the sha256 the manifest gives', async () => {
    const good = createHash('sha256').update(VOCAB).digest('hex');
    write(manifest({ sha256: { 'vocab.txt': good } }));
    await readModelFolder(dir);
    write(manifest({ sha256: { 'vocab.txt': '0'.repeat(64) } }));
    const message = (await rejection(readModelFolder(dir))).message;
    expect(message).to.include(`${join(dir, 'vocab.txt')} has sha256 ${good}, the manifest says ${'0'.repeat(64)}`);
  });

  it('puts the default folder under SVC_CACHE_DIR, else ~/.cache/svc', () => {
    expect(defaultModelDir({ SVC_CACHE_DIR: '/srv/cache' })).to.equal(`/srv/cache/models/${DEFAULT_MODEL}`);
    expect(defaultModelDir({})).to.equal(join(homedir(), '.cache', 'svc', 'models', DEFAULT_MODEL));
  });
});
