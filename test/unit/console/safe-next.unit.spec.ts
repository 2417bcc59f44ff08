import { expect } from 'chai';
import { safeNext } from '../../../services/console/safe-next.ts';

describe('console: where a log-in goes on to, `next` (unit)', () => {
  it('keeps a console path with its query, normalised, without a fragment', () => {
    expect(safeNext('/team')).to.equal('/team');
    expect(safeNext('/team/join?token=abc_DEF-123')).to.equal('/team/join?token=abc_DEF-123');
    expect(safeNext('/team?subscriptionId=sub%201')).to.equal('/team?subscriptionId=sub%201');
    expect(safeNext('/a/../team')).to.equal('/team');
    expect(safeNext('/team#members')).to.equal('/team');
    // Encoded slashes stay encoded: a browser does not read them as an authority.
    expect(safeNext('/%2F%2Fevil.example')).to.equal('/%2F%2Fevil.example');
  });

  it('refuses anything a browser could read as another origin: no open redirect', () => {
    for (const value of [
      '//evil.example',
      '//evil.example/team',
      '/\\evil.example',
      '\\\\evil.example',
      '/\t/evil.example',
      '/\n/evil.example',
      ' /team',
      'https://evil.example/team',
      'http:/evil.example',
      'javascript:alert(1)',
      'data:text/html,x',
      'team',
      '../team',
      '/.//evil.example',
      '/a/..//evil.example',
      '/..//evil.example',
    ]) {
      expect(safeNext(value), JSON.stringify(value)).to.equal(null);
    }
  });

  it('refuses what is not a short string', () => {
    expect(safeNext(undefined)).to.equal(null);
    expect(safeNext('')).to.equal(null);
    expect(safeNext(['/team'])).to.equal(null);
    expect(safeNext({ path: '/team' })).to.equal(null);
    expect(safeNext(`/${'a'.repeat(2048)}`)).to.equal(null);
  });
});
