import { expect } from 'chai';
import { elementTokens, rankFiles } from '../../../services/integration/code/element-code.ts';
import type { SearchHit } from '../../../services/rag/retrieval.ts';
import { clueFromSelector, linkFindings, MAX_LINKED_FINDINGS, type CodeSearch } from '../../../services/vision/app/code-links.ts';
import type { ElementClue, Finding } from '../../../services/vision/analysis/types.ts';

const clue = (over: Partial<ElementClue>): ElementClue => ({
  selector: 'x',
  tag: 'button',
  text: '',
  testId: '',
  id: '',
  role: '',
  ariaLabel: '',
  classes: [],
  alt: '',
  src: '',
  name: '',
  ...over,
});

const hit = (file: string, line: number, content = ''): SearchHit => ({
  id: `${file}:${line}`,
  content,
  score: 0.5,
  metadata: { file, type: 'code', startLine: line, endLine: line + 4, language: 'javascript' },
});

describe('findings traced to code (unit)', () => {
  it('reads id, test id, classes and tag from the last part of a selector', () => {
    expect(clueFromSelector('main > [data-testid="add-to-cart"]')).to.include({ testId: 'add-to-cart', tag: '' });
    const c = clueFromSelector('#nav a.btn.btn-primary');
    expect(c).to.include({ tag: 'a', id: '' });
    expect(c.classes).to.deep.equal(['btn', 'btn-primary']);
    expect(clueFromSelector('#added\\.dialog').id).to.equal('added.dialog');
  });

  it('looks up the file name of an image, never a data: URL, and no text too long to be one literal', () => {
    const tokens = elementTokens(clue({ src: 'http://x/img/desk.svg?v=2', text: 'x'.repeat(61), classes: ['photo'] }));
    expect(tokens.map((t) => t.value)).to.deep.equal(['desk.svg', 'photo']);
    expect(elementTokens(clue({ src: 'data:image/svg+xml,abc' }))).to.deep.equal([]);
  });

  it('ranks a file holding the test id above files that are only semantically near', async () => {
    const links = await rankFiles(clue({ testId: 'add-to-cart', classes: ['btn'], text: 'Add to cart' }), 3, {
      lookup: async (token) =>
        token === 'add-to-cart'
          ? [hit('src/add.js', 10)]
          : token === 'btn'
            ? [hit('src/add.js', 12), hit('src/coupon.js', 3), hit('src/other.js', 1)]
            : [],
      search: async () => [hit('src/cart.js', 1), hit('src/coupon.js', 1), hit('src/add.js', 1)],
    });
    expect(links.map((l) => l.file)).to.deep.equal(['src/add.js', 'src/cart.js', 'src/coupon.js']);
    // The lines of the file's chunk with the most evidence (the test id's).
    expect(links[0]).to.include({ startLine: 10, endLine: 14 });
    expect(links.reduce((s, l) => s + l.score, 0)).to.be.at.most(1);
  });

  it('links each finding with a selector once per element, most severe first, and says why others have none', async () => {
    const searched: string[] = [];
    const search: CodeSearch = {
      collectionName: 'shop',
      find: async (c) => {
        searched.push(c.selector);
        return c.selector === '#none' ? [] : [{ file: `${c.selector}.js`, startLine: 1, endLine: 2, score: 1 }];
      },
    };
    const finding = (selector: string | undefined, severity: Finding['severity']): Finding => ({
      type: 't',
      severity,
      message: '',
      evidence: '',
      ...(selector ? { selector } : {}),
    });
    const findings = [
      finding('#a', 'minor'),
      finding(undefined, 'critical'),
      finding('#a', 'serious'),
      finding('#none', 'moderate'),
      ...Array.from({ length: MAX_LINKED_FINDINGS }, (_, i) => finding(`#m${i}`, 'minor')),
    ];
    const { findings: out, summary } = await linkFindings(findings, [clue({ selector: '#a', testId: 'a' })], search);
    expect(searched.slice(0, 2)).to.deep.equal(['#a', '#none']);
    expect(out[0]!.code?.[0]?.file).to.equal('#a.js');
    expect(out[1]!.code).to.equal(undefined);
    expect(out[3]!.code).to.equal(undefined);
    expect(summary.collectionName).to.equal('shop');
    expect(summary.findingsLinked).to.equal(MAX_LINKED_FINDINGS - 1);
    expect(summary.reason)
      .to.match(/3 less severe finding\(s\) past the first 40/)
      .and.match(/no file .* of 1 finding/);
  });
});
