import { expect } from 'chai';
import { PUBLIC_ERROR_MAX, publicJobError } from '../../../services/rag/indexing/public-error.ts';

const HIDE = ['/srv/projects', '/var/lib/svc/rag/'];

/** A Node system error as fs throws it: code, errno, syscall, path and a message naming the path. */
function enoent(path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), {
    code: 'ENOENT',
    errno: -2,
    syscall: 'open',
    path,
  });
}

describe('publicJobError: an index job failure as the customer may read it', () => {
  it('tells a path under a hidden root relative to that root, and keeps the errno code', () => {
    expect(publicJobError(enoent('/srv/projects/shop/src/a.ts'), HIDE)).to.equal("ENOENT: no such file or directory, open 'shop/src/a.ts'");
    expect(publicJobError(new Error('EACCES: permission denied, scandir /var/lib/svc/rag/indexes/c1'), HIDE)).to.equal(
      'EACCES: permission denied, scandir indexes/c1',
    );
    expect(publicJobError(new Error('cannot index /srv/projects'), HIDE)).to.equal('cannot index .');
  });

  it('tells the closest root when roots nest', () => {
    expect(publicJobError(new Error('bad /srv/projects/shop/x.ts'), ['/srv', '/srv/projects/shop'])).to.equal('bad x.ts');
  });

  it('hides every other absolute path, including file URLs and paths that climb out of a root', () => {
    expect(publicJobError(enoent('/etc/svc/secret.pem'), HIDE)).to.equal("ENOENT: no such file or directory, open '<server path>'");
    expect(publicJobError(new Error('failed at file:///opt/svc/node_modules/onnx/x.node.'), HIDE)).to.equal('failed at <server path>.');
    expect(publicJobError(new Error('open /srv/projects/../../etc/passwd'), HIDE)).to.equal('open <server path>');
    expect(publicJobError(new Error('open /srv/projectsX/a'), HIDE)).to.equal('open <server path>');
    expect(publicJobError(new Error('open /srv/projects/a'), ['/'])).to.equal('open <server path>');
    expect(publicJobError(new Error('two: /tmp/a and (/home/u/b)'), [])).to.equal('two: <server path> and (<server path>)');
  });

  it('leaves what is not an absolute server path alone: URLs, relative paths, fractions', () => {
    const text = 'GET https://host.example/a/b failed for src/a.ts, 3/4 done, and/or retried';
    expect(publicJobError(new Error(text), HIDE)).to.equal(text);
  });

  it('never includes the stack, even one written into the message', () => {
    const err = new Error('embedding failed\n    at run (/srv/app/services/rag/engine.ts:10:5)\n    at process (node:internal/x:1:1)');
    const answer = publicJobError(err, HIDE);
    expect(answer).to.equal('embedding failed');
    expect(answer).to.not.include(err.stack!.split('\n')[1]!.trim());
  });

  it('adds the errno code a message leaves out', () => {
    const err = Object.assign(new Error('could not read the project'), { code: 'EMFILE' });
    expect(publicJobError(err, HIDE)).to.equal('EMFILE: could not read the project');
    expect(publicJobError(Object.assign(new Error('x'), { code: 'ERR_SOMETHING_INTERNAL' }), HIDE)).to.equal('x');
  });

  it('caps the length at PUBLIC_ERROR_MAX', () => {
    const answer = publicJobError(new Error('x'.repeat(5000)), HIDE);
    expect(answer).to.have.length(PUBLIC_ERROR_MAX);
    expect(PUBLIC_ERROR_MAX).to.equal(500);
  });

  it('reads thrown values that are not errors without dumping them', () => {
    expect(publicJobError('disk full at /srv/projects/shop', HIDE)).to.equal('disk full at shop');
    expect(publicJobError({ secret: 'k' }, HIDE)).to.equal('indexing failed');
    expect(publicJobError(undefined, HIDE)).to.equal('indexing failed');
    expect(publicJobError(42, HIDE)).to.equal('42');
  });
});
