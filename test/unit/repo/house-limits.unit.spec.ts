import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  brokenLinks,
  castViolation,
  type HouseCeilings,
  headingAnchors,
  lineCount,
  readmeViolation,
  relativeLinks,
  unknownCastLines,
} from '../../support/house-limits.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;

/** The ceilings kept in the repository: raising one is a visible edit of house-limits.json. */
function ceilings(): HouseCeilings {
  const raw: unknown = JSON.parse(readFileSync(new URL('./house-limits.json', import.meta.url), 'utf8'));
  if (typeof raw !== 'object' || raw === null) throw new Error('house-limits.json: not an object');
  const { readmeLines, unknownCasts, castRoots } = raw as Record<string, unknown>;
  if (!Number.isInteger(readmeLines) || !Number.isInteger(unknownCasts))
    throw new Error('house-limits.json: readmeLines and unknownCasts must be integers');
  if (!Array.isArray(castRoots) || !castRoots.every((r) => typeof r === 'string'))
    throw new Error('house-limits.json: castRoots must be folder names');
  return { readmeLines: Number(readmeLines), unknownCasts: Number(unknownCasts), castRoots };
}

function typescriptUnder(root: string) {
  return readdirSync(join(ROOT, root), { recursive: true, encoding: 'utf8' })
    .filter((p) => /\.[cm]?tsx?$/.test(p) && !p.split('/').includes('node_modules'))
    .map((p) => ({ path: `${root}/${p}`, text: readFileSync(join(ROOT, root, p), 'utf8') }));
}

function readRepositoryFile(path: string): string | undefined {
  try {
    return statSync(join(ROOT, path)).isDirectory() ? '' : readFileSync(join(ROOT, path), 'utf8');
  } catch {
    return undefined;
  }
}

const SAMPLE: HouseCeilings = { readmeLines: 3, unknownCasts: 2, castRoots: ['services', 'events'] };

describe('house limits: the README and the casts (unit)', () => {
  it('keeps README.md within its line ceiling', () => {
    expect(readmeViolation(readFileSync(join(ROOT, 'README.md'), 'utf8'), ceilings())).to.equal(undefined);
  });

  it('keeps `as unknown as` under services/ and events/ within its ceiling', () => {
    const limits = ceilings();
    expect(castViolation(limits.castRoots.flatMap(typescriptUnder), limits)).to.equal(undefined);
  });

  it('resolves every relative link of README.md, and each anchor to a heading of the file it names', () => {
    expect(brokenLinks('README.md', readFileSync(join(ROOT, 'README.md'), 'utf8'), readRepositoryFile)).to.deep.equal([]);
  });

  it('counts lines as wc -l does, and a last line without its newline too', () => {
    expect(lineCount('')).to.equal(0);
    expect(lineCount('a\n')).to.equal(1);
    expect(lineCount('a\nb\n')).to.equal(2);
    expect(lineCount('a\nb')).to.equal(2);
  });

  it('refuses a README one line over the ceiling and accepts one at it', () => {
    expect(readmeViolation('1\n2\n3\n', SAMPLE)).to.equal(undefined);
    expect(readmeViolation('1\n2\n3\n4\n', SAMPLE)).to.match(/^README\.md has 4 lines, more than 3/);
  });

  it('counts every cast, however spaced, two on a line as two, and not the words in other uses', () => {
    const text = [
      'const a = x as unknown as A;',
      'const b = (y as unknown as B, z as unknown as C);',
      'const c = w as',
      '  unknown as D;',
      'const d = v as Unknown;',
      'const e = has unknown assets;',
    ].join('\n');
    expect(unknownCastLines(text)).to.deep.equal([1, 2, 2, 3]);
  });

  it('refuses casts over the ceiling, naming every place, and accepts them at it', () => {
    const at = [{ path: 'services/a.ts', text: 'x as unknown as A;\ny as unknown as B;\n' }];
    expect(castViolation(at, SAMPLE)).to.equal(undefined);
    const over = [...at, { path: 'events/b.ts', text: '\n\nz as unknown as C;\n' }];
    const message = castViolation(over, SAMPLE);
    expect(message).to.match(/appears 3 times under services, events, more than the ceiling of 2/);
    expect(message).to.include('services/a.ts:1, services/a.ts:2, events/b.ts:3');
  });

  it('finds relative links outside code, and reports a missing file or heading', () => {
    const markdown = [
      '# Top',
      '## Try it: `npm start`',
      'See [a](docs/a.md), [b](docs/a.md#the-part), [c](#try-it-npm-start), [d](https://example.com/x.md),',
      '![shot](img/s.png) and [gone](docs/gone.md) and [bad](docs/a.md#nowhere) and [up](../outside.md)',
      '`[not](a-link.md)`',
      '```',
      '[nor](this.md)',
      '```',
    ].join('\n');
    expect(relativeLinks(markdown).map((l) => l.target)).to.deep.equal([
      'docs/a.md',
      'docs/a.md#the-part',
      '#try-it-npm-start',
      'img/s.png',
      'docs/gone.md',
      'docs/a.md#nowhere',
      '../outside.md',
    ]);
    const files: Record<string, string> = { 'README.md': markdown, 'docs/a.md': '# A\n\n## The part\n', 'img/s.png': 'png' };
    expect(brokenLinks('README.md', markdown, (p) => files[p])).to.deep.equal([
      'README.md:4: docs/gone.md (no such file)',
      'README.md:4: docs/a.md#nowhere (no such heading in docs/a.md)',
      'README.md:4: ../outside.md (no such file)',
    ]);
  });

  it("makes GitHub's heading anchors, repeats numbered", () => {
    expect([...headingAnchors('# Team single sign-on: OpenID Connect (`KEYS_PORT` 8082)\n## Notes\n## Notes\n')]).to.deep.equal([
      'team-single-sign-on-openid-connect-keys_port-8082',
      'notes',
      'notes-1',
    ]);
  });
});
