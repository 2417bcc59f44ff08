import { expect } from 'chai';
import { chunkFile } from '../../../services/rag/chunking/chunker.ts';
import { expectEveryLineCovered, fixture, lineOf, only, summary } from './helpers.ts';

const SOURCE = fixture('inventory.py');
const PATH = 'warehouse/inventory.py';

describe('code chunker: Python (unit)', () => {
  it('chunks the module header, classes and functions with exact line ranges', async () => {
    const chunks = await chunkFile(PATH, SOURCE);
    expect(summary(chunks)).to.deep.equal([
      'module - 1-8',
      `class Item ${lineOf(SOURCE, '@dataclass')}-${lineOf(SOURCE, 'quantity: int = 0')}`,
      `function load_catalogue ${lineOf(SOURCE, '# Cached because')}-${lineOf(SOURCE, 'return items')}`,
      `class Warehouse ${lineOf(SOURCE, 'class Warehouse')}-${lineOf(SOURCE, 'return raw.strip')}`,
      `module - ${lineOf(SOURCE, '__main__')}-${lineOf(SOURCE, 'print(')}`,
    ]);
  });

  it('keeps decorators, the comment above them and the docstring in a function chunk', async () => {
    const fn = only(await chunkFile(PATH, SOURCE), 'load_catalogue');
    const lines = fn.content.split('\n');
    expect(lines.slice(0, 4)).to.deep.equal([
      '# Cached because catalogues are large and rarely change.',
      '@functools.lru_cache(maxsize=32)',
      'def load_catalogue(path: str) -> dict[str, Item]:',
      '    """Read a catalogue file into a dictionary keyed by SKU."""',
    ]);
  });

  it('splits a large class into an outline and Class.method chunks, decorators included', async () => {
    const chunks = await chunkFile(PATH, SOURCE, { maxChars: 400 });
    const outline = only(chunks, 'Warehouse');
    expect(outline.kind).to.equal('class');
    expect(outline.content.split('\n')).to.include.members([
      'class Warehouse:',
      '    """A place that stores items and answers stock queries."""',
      '    limit = DEFAULT_LIMIT',
      '    def __init__(self, name: str) -> None:',
      '    @property',
      '    def total(self) -> int:',
    ]);
    expect(outline.content).to.not.include('self._stock.get(item.sku, 0)');

    const total = only(chunks, 'Warehouse.total');
    expect(total.kind).to.equal('method');
    expect(total.content.split('\n').slice(0, 3)).to.deep.equal([
      '    @property',
      '    def total(self) -> int:',
      '        """How many units are stored, all SKUs together."""',
    ]);
    expect(total.startLine).to.equal(lineOf(SOURCE, '@property'));
    expect(only(chunks, 'Warehouse.parse_sku').content).to.match(/^ {4}@staticmethod\n {4}def parse_sku/);
    expect(chunks.filter((c) => c.kind === 'method').map((c) => c.symbol)).to.deep.equal([
      'Warehouse.__init__',
      'Warehouse.total',
      'Warehouse.receive',
      'Warehouse.parse_sku',
    ]);
    expectEveryLineCovered(SOURCE, chunks, 400);
  });
});
