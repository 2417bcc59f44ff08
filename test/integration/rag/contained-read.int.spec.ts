import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { readProjectFile } from '../../../services/integration/code/project-files.ts';
import { listSources, prepareFile } from '../../../services/rag/indexing/index.task.ts';
import { readContained } from '../../../services/rag/sources/contained-read.ts';
import { isSkipped, SkippedSourceError, type SourceFile } from '../../../services/rag/sources/source-file.ts';
import { walkProject } from '../../../services/rag/sources/walk.ts';
import type { RagCollection } from '../../../services/rag/collections.projection.ts';
import type { RagDeps } from '../../../services/rag/app/deps.ts';

/**
 * Every read of a customer's folder stays inside it at the moment of reading: a file listed as
 * regular and swapped for a link afterwards, a directory swapped for a link, or the folder itself
 * replaced, are not read through (real files on the local file system).
 */
describe('reads stay inside the customer folder when they happen (integration)', () => {
  let base: string;
  let root: string;
  let outside: string;

  beforeEach(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'contained-')));
    root = join(base, 'customer', 'project');
    outside = join(base, 'other-customer');
    mkdirSync(join(root, 'src'), { recursive: true });
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(root, 'src', 'a.ts'), 'export const mine = 1;\n');
    writeFileSync(join(outside, 'secret.ts'), 'export const theirs = "secret";\n');
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  const swapForLink = (path: string, target: string) => {
    unlinkSync(path);
    symlinkSync(target, path);
  };

  it('reads a file inside, and refuses one that became a link out, a directory that became one, and one too large', async () => {
    const inside = await readContained(root, join(root, 'src', 'a.ts'), 1000);
    expect('bytes' in inside && inside.bytes.toString()).to.equal('export const mine = 1;\n');
    expect(await readContained(root, join(root, 'src', 'a.ts'), 5)).to.deep.equal({ refused: 'too-large' });
    swapForLink(join(root, 'src', 'a.ts'), join(outside, 'secret.ts'));
    expect(await readContained(root, join(root, 'src', 'a.ts'), 1000)).to.deep.equal({ refused: 'outside-root' });
    renameSync(join(root, 'src'), join(root, 'src-old'));
    symlinkSync(outside, join(root, 'src'));
    expect(await readContained(root, join(root, 'src', 'secret.ts'), 1000)).to.deep.equal({ refused: 'outside-root' });
  });

  it("the walker's listed file, swapped for a link before it is read, is not read through", async () => {
    const entries = [];
    for await (const entry of walkProject(root)) entries.push(entry);
    const listed = entries.find((e) => e.path === 'src/a.ts') as SourceFile;
    expect(isSkipped(listed)).to.equal(false);
    swapForLink(join(root, 'src', 'a.ts'), join(outside, 'secret.ts'));
    const read = await listed.read().then(
      (text) => ({ text }),
      (error: unknown) => ({ error }),
    );
    expect((read as { error: SkippedSourceError }).error)
      .to.be.instanceOf(SkippedSourceError)
      .with.property('reason', 'outside-root');
  });

  it("the indexer's worker task skips a file swapped for a link, and refuses a folder replaced by one", async () => {
    const input = {
      root,
      path: 'src/a.ts',
      text: null,
      storedHash: undefined,
      previous: [],
      maxFileBytes: 100_000,
      model: { dir: undefined, threads: 1 },
    };
    swapForLink(join(root, 'src', 'a.ts'), join(outside, 'secret.ts'));
    expect(await prepareFile(input)).to.deep.equal({ skipped: 'outside-root' });
    renameSync(root, `${root}-old`);
    symlinkSync(outside, root);
    const listed = await listSources({ root, pushed: [], maxFileBytes: 100_000 }).then(
      (l) => ({ l }),
      (error: unknown) => ({ error }),
    );
    expect((listed as { error: Error }).error).to.have.property('name', 'FolderMovedError');
  });

  it('integration reads a file of the folder, and nothing once it or its folder point elsewhere', async () => {
    const deps = { pushed: { get: async () => null }, config: { rag: { maxFileBytes: 100_000 } } } as unknown as Pick<
      RagDeps,
      'pushed' | 'config'
    >;
    const collection = { collectionId: 'c', projectPath: root } as RagCollection;
    expect(await readProjectFile(deps, collection, 'src/a.ts')).to.equal('export const mine = 1;\n');
    swapForLink(join(root, 'src', 'a.ts'), join(outside, 'secret.ts'));
    expect(await readProjectFile(deps, collection, 'src/a.ts')).to.equal(null);
    renameSync(root, `${root}-old`);
    symlinkSync(outside, root);
    expect(await readProjectFile(deps, collection, 'secret.ts')).to.equal(null);
  });
});
