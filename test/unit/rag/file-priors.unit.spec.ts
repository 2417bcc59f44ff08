import { expect } from 'chai';
import { fileKindOf, KIND_WEIGHTS, pathTemplate, rerankByFile, weightsFor } from '../../../services/rag/index-store/file-priors.ts';

const list = (...paths: string[]) => paths.map((path, i) => ({ item: path, score: 1 - i * 0.01 }));
const rank = (fused: ReturnType<typeof list>, query: string, k = 10, options = {}) =>
  rerankByFile(fused, (p) => p, query, k, options).map((r) => r.item);

describe('rag index store: file priors (unit)', () => {
  it('tells code from tests, type declarations and prose, in the languages indexed', () => {
    const kinds = Object.fromEntries(
      [
        'lib/dispatcher/client-h1.js',
        'src/cmap/connection_pool.ts',
        'zapcore/sampler.go',
        'com/google/gson/stream/JsonReader.java',
        'types/client.d.ts',
        'index.d.mts',
        'stubs/requests.pyi',
        'CHANGELOG.md',
        'docs/api/Client.md',
        'LICENSE',
        'README',
        'CONTRIBUTING.rst',
        'zapcore/sampler_test.go',
        'test/client.js',
        'src/__tests__/pool.ts',
        'lib/pool.spec.ts',
        'tests/test_parser.py',
        'src/test/java/com/x/ReaderTest.java',
      ].map((p) => [p, fileKindOf(p)]),
    );
    expect(kinds).to.deep.equal({
      'lib/dispatcher/client-h1.js': 'code',
      'src/cmap/connection_pool.ts': 'code',
      'zapcore/sampler.go': 'code',
      'com/google/gson/stream/JsonReader.java': 'code',
      'types/client.d.ts': 'declaration',
      'index.d.mts': 'declaration',
      'stubs/requests.pyi': 'declaration',
      'CHANGELOG.md': 'prose',
      'docs/api/Client.md': 'prose',
      LICENSE: 'prose',
      README: 'prose',
      'CONTRIBUTING.rst': 'prose',
      'zapcore/sampler_test.go': 'test',
      'test/client.js': 'test',
      'src/__tests__/pool.ts': 'test',
      'lib/pool.spec.ts': 'test',
      'tests/test_parser.py': 'test',
      'src/test/java/com/x/ReaderTest.java': 'test',
    });
    // Names that only look alike stay code.
    expect(fileKindOf('lib/latest.js')).to.equal('code');
    expect(fileKindOf('src/contest/history.ts')).to.equal('code');
    expect(fileKindOf('src/attestation.go')).to.equal('code');
  });

  it('gives a kind full weight when the question asks for it by name', () => {
    expect(weightsFor('where is the socket closed')).to.equal(KIND_WEIGHTS);
    expect(weightsFor('which tests cover the pool').test).to.equal(1);
    expect(weightsFor('what does the changelog say about retries').prose).to.equal(1);
    expect(weightsFor('the typings of Client options').declaration).to.equal(1);
    expect(weightsFor('the typings of Client options').prose).to.equal(KIND_WEIGHTS.prose);
    // Setting up is what guides answer.
    expect(weightsFor('which environment variables set the listening port').prose).to.equal(1);
    expect(weightsFor('how do I install it behind a proxy').prose).to.equal(1);
  });

  it('ranks code above prose and declarations that score alike, and keeps them when nothing else is there', () => {
    expect(rank(list('CHANGELOG.md', 'types/pool.d.ts', 'lib/pool.js'), 'how does the pool pick a connection')).to.deep.equal([
      'lib/pool.js',
      'CHANGELOG.md',
      'types/pool.d.ts',
    ]);
    // A clear lead survives the prior: the weights re-order near ties, they do not hide a file.
    const clear = [
      { item: 'docs/api/Pool.md', score: 1 },
      { item: 'lib/pool.js', score: 0.3 },
    ];
    expect(rank(clear, 'how does the pool pick a connection')[0]).to.equal('docs/api/Pool.md');
    expect(rank(list('CHANGELOG.md', 'lib/pool.js'), 'what does the changelog say about the pool')).to.deep.equal([
      'CHANGELOG.md',
      'lib/pool.js',
    ]);
  });

  it('lets one file of a versioned family lead and moves its near-copies down, not its own chunks', () => {
    expect(pathTemplate('protocol/requests/fetch/v11/request.js')).to.equal('protocol/requests/fetch/v#/request.js');
    const fused = [
      { item: 'requests/fetch/v0/request.js#1', score: 1 },
      { item: 'requests/fetch/v0/request.js#2', score: 0.99 },
      { item: 'requests/fetch/v1/request.js#1', score: 0.98 },
      { item: 'requests/fetch/v2/request.js#1', score: 0.97 },
      { item: 'broker/index.js#1', score: 0.9 },
      { item: 'consumer/fetch.js#1', score: 0.45 },
    ];
    const pathOf = (item: string) => item.split('#')[0];
    const order = rerankByFile(fused, pathOf, 'how is a fetch built', 6, { nearCopyDecay: 0.5 }).map((r) => r.item);
    // Off by default: the fused order.
    expect(rerankByFile(fused, pathOf, 'how is a fetch built', 6).map((r) => r.item)).to.deep.equal(fused.map((f) => f.item));
    expect(order.slice(0, 4)).to.deep.equal([
      'requests/fetch/v0/request.js#1',
      'requests/fetch/v0/request.js#2',
      'broker/index.js#1',
      'requests/fetch/v1/request.js#1',
    ]);
    // v2 is the third file of the family: 0.97 x 0.5^2 falls below consumer/fetch.js.
    expect(order.slice(4)).to.deep.equal(['consumer/fetch.js#1', 'requests/fetch/v2/request.js#1']);
  });

  it('takes the best k only, in a deterministic order, and is the fused order when turned off', () => {
    const fused = list('a.md', 'b.d.ts', 'c.js', 'v1/x.js', 'v2/x.js', 'd_test.go');
    const off = { weights: { code: 1, test: 1, declaration: 1, prose: 1 }, nearCopyDecay: 1 };
    expect(rank(fused, 'q', 10, off)).to.deep.equal(fused.map((f) => f.item));
    expect(rank(fused, 'q', 2)).to.have.length(2);
    expect(rank(fused, 'q', 0)).to.deep.equal([]);
    expect(rank(fused, 'q')).to.deep.equal(rank(fused, 'q'));
    const tie = [
      { item: 'b.js', score: 0.5 },
      { item: 'a.js', score: 0.5 },
    ];
    expect(rank(tie, 'q')).to.deep.equal(['b.js', 'a.js']);
  });
});
