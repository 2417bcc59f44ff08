/**
 * Indexes a folder into a store and says `indexed <path>` after each file it writes, so the
 * crash test can SIGKILL it in the middle of a run.
 *   node crash-child.ts <source folder> <store file> <model folder>
 */

import { OnnxEmbedder } from '../../../services/rag/embedding/embedder.ts';
import { IndexStore } from '../../../services/rag/index-store/store.ts';
import { embeddingIdentity } from '../../../services/rag/indexing/embedding-text.ts';
import { indexCollection } from '../../../services/rag/indexing/index-collection.ts';
import { walkProject } from '../../../services/rag/sources/walk.ts';

const [source, file, model] = process.argv.slice(2);
if (!source || !file || !model) throw new Error('usage: crash-child.ts <source> <store> <model>');
const embedder = await OnnxEmbedder.load(model, { intraOpThreads: 1 });
const store = IndexStore.open(file, { model: embeddingIdentity(embedder.folder.manifest.name, embedder.dimensions) });
await indexCollection({
  store,
  embedder,
  files: walkProject(source),
  onProgress: (p) => {
    if (p.phase === 'indexing' && p.path) process.stdout.write(`indexed ${p.path}\n`);
  },
});
store.close();
process.stdout.write('done\n');
