import { expect } from 'chai';
import { join } from 'node:path';
import { mavenArtifact, mavenCacheDir, parseCorpus, parseSha1 } from '../../../bench/rag-eval/corpus.ts';

const SET = 'bench/rag-eval/x.json';

describe('npm run bench:rag corpus of a set (unit)', () => {
  it('reads a corpus without a source as npm, and keeps go and maven', () => {
    expect(parseCorpus({ package: 'undici', version: '7.29.0', root: 'node_modules/undici/lib' }, SET)).to.deep.equal({
      source: 'npm',
      package: 'undici',
      version: '7.29.0',
      root: 'node_modules/undici/lib',
    });
    expect(parseCorpus({ source: 'go', package: 'go.uber.org/zap', version: 'v1.27.0', root: '.' }, SET).source).to.equal('go');
    const gson = { source: 'maven', package: 'com.google.code.gson:gson', version: '2.13.1', root: 'com/google/gson' };
    expect(parseCorpus(gson, SET)).to.deep.equal(gson);
  });

  it('refuses a corpus that is missing, incomplete, from an unknown registry or with a root outside the package, naming the set', () => {
    expect(() => parseCorpus(undefined, SET)).to.throw(`${SET}: corpus is missing`);
    expect(() => parseCorpus({ package: 'undici', root: 'lib' }, SET)).to.throw(`${SET}: corpus.version must be a non-empty string`);
    expect(() => parseCorpus({ package: 'undici', version: ' ', root: 'lib' }, SET)).to.throw('corpus.version');
    expect(() => parseCorpus({ source: 'pypi', package: 'x', version: '1', root: '.' }, SET)).to.throw(
      `${SET}: corpus.source must be one of npm, go, maven (is "pypi")`,
    );
    expect(() => parseCorpus({ package: 'x', version: '1', root: '/etc' }, SET)).to.throw('corpus.root must be a relative path');
    expect(() => parseCorpus({ package: 'x', version: '1', root: 'lib/../../..' }, SET)).to.throw('corpus.root must be a relative path');
  });

  it('refuses a Go module path or version go would misread', () => {
    const go = (pkg: string, version: string) => () => parseCorpus({ source: 'go', package: pkg, version, root: '.' }, SET);
    expect(go('-modfile=x', 'v1.0.0')).to.throw('is not a Go module path');
    expect(go('go.uber.org/zap@v1', 'v1.0.0')).to.throw('is not a Go module path');
    expect(go('go.uber.org/zap', '1.27.0')).to.throw(`${SET}: 1.27.0 is not a Go module version`);
    expect(go('go.uber.org/zap', 'latest')).to.throw('is not a Go module version');
    expect(go('golang.org/x/text', 'v0.0.0-20240101000000-abcdefabcdef')).not.to.throw();
  });

  it('builds the sources jar address on Maven Central from group:artifact and the version', () => {
    const artifact = mavenArtifact({ package: 'com.google.code.gson:gson', version: '2.13.1' }, SET);
    expect(artifact).to.deep.equal({
      group: 'com.google.code.gson',
      artifact: 'gson',
      version: '2.13.1',
      jarUrl: 'https://repo1.maven.org/maven2/com/google/code/gson/gson/2.13.1/gson-2.13.1-sources.jar',
      sha1Url: 'https://repo1.maven.org/maven2/com/google/code/gson/gson/2.13.1/gson-2.13.1-sources.jar.sha1',
    });
    expect(mavenCacheDir(artifact, '/home/dev')).to.equal(join('/home/dev', '.cache', 'svc', 'rag-eval', 'gson-2.13.1-sources'));
  });

  it('refuses Maven coordinates that are not group:artifact, or a version that would leave the cache folder', () => {
    const maven =
      (pkg: string, version = '1.0') =>
      () =>
        parseCorpus({ source: 'maven', package: pkg, version, root: '.' }, SET);
    expect(maven('gson')).to.throw(`${SET}: gson is not a Maven group:artifact`);
    expect(maven('com.google:gson:jar')).to.throw('is not a Maven group:artifact');
    expect(maven('com/google:gson')).to.throw('is not a Maven group:artifact');
    expect(maven('com.google:gson', '../../x')).to.throw(`${SET}: ../../x is not a Maven version`);
    expect(maven('org.apache.commons:commons-lang3', '3.17.0')).not.to.throw();
  });

  it('reads the SHA-1 of a .sha1 file, alone or followed by the file name', () => {
    const sha1 = '291e19613797898e0b2ba95553c874c1d07e00c1';
    expect(parseSha1(`${sha1}\n`)).to.equal(sha1);
    expect(parseSha1(`${sha1.toUpperCase()}  gson-2.13.1-sources.jar\n`)).to.equal(sha1);
    expect(parseSha1('<html>not found</html>')).to.equal(undefined);
    expect(parseSha1('')).to.equal(undefined);
  });
});
