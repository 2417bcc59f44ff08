import { expect } from 'chai';
import { chunkFile } from '../../../services/rag/chunking/chunker.ts';
import { fixture, lineOf, only, summary } from './helpers.ts';

const SOURCE = fixture('server.go');
const PATH = 'internal/server/server.go';

describe('code chunker: Go (unit)', () => {
  it('chunks types, functions and methods with their doc comments', async () => {
    const chunks = await chunkFile(PATH, SOURCE);
    expect(summary(chunks)).to.deep.equal([
      `module - 1-${lineOf(SOURCE, 'const DefaultPort')}`,
      `interface Store ${lineOf(SOURCE, '// Store is')}-${lineOf(SOURCE, '// Store is') + 3}`,
      `type Server ${lineOf(SOURCE, '// Server answers')}-${lineOf(SOURCE, '// Server answers') + 4}`,
      `function NewServer ${lineOf(SOURCE, '// NewServer')}-${lineOf(SOURCE, '// NewServer') + 3}`,
      `method Server.ServeHTTP ${lineOf(SOURCE, '// ServeHTTP')}-${SOURCE.trimEnd().split('\n').length}`,
    ]);
    expect(chunks.every((c) => c.language === 'go')).to.equal(true);
  });

  it('names a method after its receiver type and keeps its comment', async () => {
    const method = only(await chunkFile(PATH, SOURCE), 'Server.ServeHTTP');
    expect(method.kind).to.equal('method');
    expect(method.content.split('\n').slice(0, 2)).to.deep.equal([
      '// ServeHTTP answers GET /stock?sku=...',
      'func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {',
    ]);
  });

  it('gives a grouped const block its own chunk once it is large, named after its constants', async () => {
    const source = ['package p', '', 'const (', '\tA = iota', '\tB', '\tC', '\tD', '\tE', ')', ''].join('\n');
    expect(summary(await chunkFile('p.go', source))).to.deep.equal(['module - 1-1', 'variable A, B, C, D, E 3-9']);
    expect(summary(await chunkFile('p.go', source, { minVariableLines: 10 }))).to.deep.equal(['module - 1-9']);
  });
});
