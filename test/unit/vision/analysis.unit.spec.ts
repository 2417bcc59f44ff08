import { expect } from 'chai';
import { PNG } from 'pngjs';
import { analyze, diffImages } from '../../../services/vision/analysis/analyze.ts';
import { parsePageReport } from '../../../services/vision/analysis/page-report.ts';
import { decodePng, scanBlank } from '../../../services/vision/analysis/png-checks.ts';
import type {
  AxeViolation,
  Box,
  Finding,
  InteractiveElement,
  PageReport,
  PlacedElement,
  SiblingGroup,
} from '../../../services/vision/analysis/types.ts';

// Hand-made reports and images: each rule must fire on its defect and stay quiet just beside it.

function report(parts: Partial<PageReport> = {}): PageReport {
  return {
    version: 1,
    url: 'https://example.test/',
    viewport: { width: 1000, height: 800 },
    document: { width: 1000, height: 800 },
    interactive: [],
    images: [],
    textIssues: [],
    wideElements: [],
    offScreen: [],
    siblingGroups: [],
    probes: [],
    axe: { version: '4.14.1', violations: [], contrastChecked: true, contrastIncomplete: 0 },
    truncated: {},
    errors: [],
    ...parts,
  };
}

const box = (x: number, y: number, width: number, height: number): Box => ({ x, y, width, height });

let nextIndex = 0;
function control(selector: string, b: Box, parts: Partial<InteractiveElement> = {}): InteractiveElement {
  return {
    index: nextIndex++,
    selector,
    tag: 'button',
    box: b,
    role: 'button',
    roleSource: 'implicit',
    name: selector.replace('#', ''),
    nameSource: 'content',
    visible: true,
    disabled: false,
    within: [],
    inline: false,
    userAgentSized: false,
    ...parts,
  };
}

/** Interactive elements with their `index` matching their position, as the page script makes them. */
function withControls(...controls: InteractiveElement[]): PageReport {
  const byOld = new Map(controls.map((c, i) => [c.index, i]));
  return report({ interactive: controls.map((c, i) => ({ ...c, index: i, within: c.within.map((w) => byOld.get(w) ?? w) })) });
}

const placed = (selector: string, b: Box): PlacedElement => ({ selector, tag: 'div', box: b });

type Rgb = [number, number, number];
function png(width: number, height: number, paint: (x: number, y: number) => Rgb): Buffer {
  const image = new PNG({ width, height });
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      const [r, g, b] = paint(x, y);
      image.data[i] = r;
      image.data[i + 1] = g;
      image.data[i + 2] = b;
      image.data[i + 3] = 255;
    }
  }
  return PNG.sync.write(image);
}

const WHITE: Rgb = [255, 255, 255];
/** Rows of "content": a pattern no row of which is one colour. */
const textured = (x: number): Rgb => (x % 7 < 3 ? [20, 20, 20] : WHITE);
const white = png(100, 100, () => WHITE);
/** A screenshot with content in every row: nothing for the pixel checks to report. */
const busy = png(100, 100, (x) => textured(x));

const ofType = (findings: readonly Finding[], type: string) => findings.filter((f) => f.type === type);
const problems = (findings: readonly Finding[]) => findings.filter((f) => f.type !== 'interactive-element');

describe('vision analyses (pure)', () => {
  describe('ui-elements', () => {
    it('lists each interactive element with role, name, selector and box, counting roles', () => {
      const r = withControls(
        control('#save', box(0, 0, 80, 40)),
        control('#home', box(0, 50, 60, 20), { role: 'link', tag: 'a', name: 'Home' }),
      );
      const result = analyze('ui-elements', { report: r, png: white });
      const listed = ofType(result.findings, 'interactive-element');
      expect(listed).to.have.length(2);
      expect(listed[1]).to.include({ severity: 'minor', selector: '#home', message: 'link "Home"' });
      expect(listed[1]!.box).to.deep.equal(box(0, 50, 60, 20));
      expect(result.metrics).to.include({ elements: 2, 'role.button': 1, 'role.link': 1, unnamed: 0 });
      expect(problems(result.findings)).to.deep.equal([]);
      expect(result.summary).to.equal('ui-elements: 2 interactive elements listed, no problems found; 2 checks run.');
    });

    it('reports a visible, enabled control without an accessible name as serious, and only that one', () => {
      const r = withControls(
        control('#icon', box(0, 0, 40, 40), { name: '', nameSource: 'none' }),
        control('#hidden', box(0, 0, 0, 0), { name: '', nameSource: 'none', visible: false }),
        control('#off', box(50, 0, 40, 40), { name: '', nameSource: 'none', disabled: true }),
      );
      const unnamed = ofType(analyze('ui-elements', { report: r, png: white }).findings, 'unnamed-control');
      expect(unnamed.map((f) => [f.selector, f.severity])).to.deep.equal([['#icon', 'serious']]);
    });
  });

  describe('layout', () => {
    const layout = (r: PageReport) => analyze('layout', { report: r, png: white }).findings;

    it('finds two controls overlapping, with the shared area as evidence', () => {
      const found = ofType(layout(withControls(control('#a', box(0, 0, 120, 40)), control('#b', box(80, 12, 120, 40)))), 'overlap');
      expect(found).to.have.length(1);
      expect(found[0]).to.include({ severity: 'serious', selector: '#a' });
      expect(found[0]!.box).to.deep.equal(box(80, 12, 40, 28));
      expect(found[0]!.evidence).to.include('1120 px²');
    });

    it('does not call nesting, a sliver under 4 px², a hidden control or wrapped lines that miss an overlap', () => {
      const card = control('#card', box(0, 0, 300, 200), { role: 'link', tag: 'a' });
      const inner = control('#inner', box(10, 10, 80, 40), { within: [card.index] });
      expect(ofType(layout(withControls(card, inner)), 'overlap')).to.deep.equal([]);
      expect(ofType(layout(withControls(control('#a', box(0, 0, 100, 40)), control('#b', box(99, 37, 50, 40)))), 'overlap')).to.deep.equal(
        [],
      ); // 1×3 px
      expect(
        ofType(layout(withControls(control('#a', box(0, 0, 100, 40)), control('#b', box(50, 0, 100, 40), { visible: false }))), 'overlap'),
      ).to.deep.equal([]);
      // A link wrapped over two lines: its bounding box covers its neighbour, its line boxes do not.
      const wrapped = control('#wrapped', box(0, 0, 500, 40), { role: 'link', rects: [box(400, 0, 100, 20), box(0, 20, 120, 20)] });
      const next = control('#next', box(130, 20, 60, 20), { role: 'link' });
      expect(ofType(layout(withControls(wrapped, next)), 'overlap')).to.deep.equal([]);
    });

    it('finds content wider than the viewport, serious when the page scrolls sideways', () => {
      const wide = placed('#banner', box(16, 400, 1616, 40));
      const scrolling = ofType(layout(report({ document: { width: 1632, height: 800 }, wideElements: [wide] })), 'viewport-overflow');
      expect(scrolling.map((f) => [f.selector, f.severity])).to.deep.equal([['#banner', 'serious']]);
      expect(scrolling[0]!.evidence).to.include('632 px over');
      const cut = ofType(layout(report({ wideElements: [wide] })), 'viewport-overflow');
      expect(cut.map((f) => f.severity)).to.deep.equal(['moderate']);
      expect(ofType(layout(report()), 'viewport-overflow')).to.deep.equal([]);
    });

    it('finds text spilling out of its container, and leaves clipped text to visual-bugs', () => {
      const spill = {
        selector: '#spill',
        tag: 'div',
        box: box(0, 0, 120, 60),
        kind: 'overflow' as const,
        text: 'Supercalifragilistic',
        containerSelector: '#spill',
        containerBox: box(0, 0, 120, 60),
        overflowPx: 147,
        axis: 'x' as const,
      };
      const clip = { ...spill, selector: '#clip', kind: 'clipped' as const };
      const found = layout(report({ textIssues: [spill, clip] }));
      expect(ofType(found, 'container-overflow').map((f) => f.selector)).to.deep.equal(['#spill']);
      expect(ofType(found, 'clipped-text')).to.deep.equal([]);
    });

    it('finds an element placed off-screen, but not a skip link that shows on focus', () => {
      const away = { selector: '#promo', tag: 'div', box: box(-2000, 120, 300, 22), revealsOnFocus: false, text: 'Promotion' };
      const skip = { ...away, selector: '#skip', revealsOnFocus: true };
      expect(ofType(layout(report({ offScreen: [away, skip] })), 'off-screen').map((f) => f.selector)).to.deep.equal(['#promo']);
    });

    it('finds a tap target under 24×24 px crowded by another, with WCAG 2.5.8 exceptions', () => {
      const print = control('#print', box(16, 60, 64, 42));
      const tiny = control('#tiny', box(82, 75, 16, 16), { role: 'link' });
      expect(ofType(layout(withControls(print, tiny)), 'small-tap-target').map((f) => f.selector)).to.deep.equal(['#tiny']);
      // Spacing: a 24 px circle on its centre touches nothing.
      expect(ofType(layout(withControls(print, control('#alone', box(200, 75, 16, 16)))), 'small-tap-target')).to.deep.equal([]);
      // Two small targets whose circles overlap both fail.
      const pair = ofType(layout(withControls(control('#x', box(300, 0, 16, 16)), control('#y', box(320, 0, 16, 16)))), 'small-tap-target');
      expect(pair.map((f) => f.selector)).to.deep.equal(['#x', '#y']);
      expect(
        ofType(layout(withControls(print, control('#inline', box(82, 75, 40, 18), { inline: true }))), 'small-tap-target'),
      ).to.deep.equal([]);
      expect(
        ofType(layout(withControls(print, control('#check', box(82, 75, 13, 13), { userAgentSized: true }))), 'small-tap-target'),
      ).to.deep.equal([]);
      expect(ofType(layout(withControls(print, control('#ok', box(82, 70, 24, 24)))), 'small-tap-target')).to.deep.equal([]);
      expect(
        ofType(layout(withControls(print, control('#disabled', box(82, 75, 16, 16), { disabled: true }))), 'small-tap-target'),
      ).to.deep.equal([]);
    });

    const group = (direction: 'column' | 'row', boxes: Box[], alignItems = 'normal'): SiblingGroup => ({
      parentSelector: '#parent',
      direction,
      alignItems,
      textDirection: 'ltr',
      children: boxes.map((b, i) => placed(`#c${i + 1}`, b)),
    });

    it('finds a sibling 1 to 3 px out of line in a column or a row', () => {
      const column = group('column', [box(16, 0, 300, 50), box(18, 58, 298, 50), box(16, 116, 300, 50)]);
      const found = ofType(layout(report({ siblingGroups: [column] })), 'misaligned');
      expect(found.map((f) => [f.selector, f.severity])).to.deep.equal([['#c2', 'minor']]);
      expect(found[0]!.evidence).to.include('left edge at 18 px where 2 of 3');
      const row = group('row', [box(0, 10, 80, 40), box(90, 11, 80, 40), box(180, 10, 80, 40)]);
      expect(ofType(layout(report({ siblingGroups: [row] })), 'misaligned').map((f) => f.selector)).to.deep.equal(['#c2']);
    });

    it('does not call an indent, a centred stack, centred row items or aligned siblings misaligned', () => {
      const quiet = (g: SiblingGroup) => expect(ofType(layout(report({ siblingGroups: [g] })), 'misaligned')).to.deep.equal([]);
      quiet(group('column', [box(16, 0, 300, 50), box(21, 58, 295, 50), box(16, 116, 300, 50)])); // 5 px: deliberate
      quiet(group('column', [box(16, 0, 300, 50), box(18, 58, 296, 50), box(16, 116, 300, 50)])); // same centre
      quiet(group('row', [box(0, 10, 80, 40), box(90, 12, 80, 36), box(180, 10, 80, 40)])); // same centre line
      quiet(group('row', [box(0, 10, 80, 40), box(90, 12, 80, 36), box(180, 10, 80, 40)], 'baseline'));
      quiet(group('column', [box(16, 0, 300, 50), box(16, 58, 300, 50), box(16, 116, 300, 50)]));
    });
  });

  describe('accessibility', () => {
    const violation = (id: string, impact: AxeViolation['impact'], targets: string[]): AxeViolation => ({
      id,
      impact,
      description: `${id} description`,
      help: `${id} help`,
      helpUrl: `https://dequeuniversity.com/rules/axe/4.14/${id}`,
      nodeCount: targets.length,
      nodes: targets.map((target) => ({ target, html: `<x id="${target}">`, failureSummary: 'Fix this', box: box(0, 0, 10, 10) })),
    });

    it("turns each violating node into a finding with axe's impact, help URL and node count", () => {
      const axe = {
        version: '4.14.1',
        violations: [violation('color-contrast', 'serious', ['#a', '#b']), violation('button-name', 'critical', ['#icon'])],
        contrastChecked: true,
        contrastIncomplete: 1,
      };
      const result = analyze('accessibility', { report: report({ axe }), png: white });
      expect(result.findings.map((f) => [f.type, f.severity, f.selector])).to.deep.equal([
        ['axe:color-contrast', 'serious', '#a'],
        ['axe:color-contrast', 'serious', '#b'],
        ['axe:button-name', 'critical', '#icon'],
      ]);
      expect(result.findings[0]!.evidence).to.include('https://dequeuniversity.com/rules/axe/4.14/color-contrast').and.include('2 node(s)');
      expect(result.metrics).to.include({
        violations: 2,
        nodes: 3,
        'impact.serious': 2,
        'impact.critical': 1,
        'impact.minor': 0,
        contrastIncomplete: 1,
      });
      expect(result.checksRun).to.deep.equal(['axe', 'axe:color-contrast']);
    });

    it('says axe was skipped, and why, when it could not run', () => {
      const axe = {
        version: null,
        error: 'axe did not finish within 10 ms',
        violations: [],
        contrastChecked: false,
        contrastIncomplete: 0,
      };
      const result = analyze('accessibility', { report: report({ axe }), png: white });
      expect(result.findings).to.deep.equal([]);
      expect(result.checksRun).to.deep.equal([]);
      expect(result.skipped).to.deep.equal([{ check: 'axe', reason: 'axe did not finish within 10 ms' }]);
    });
  });

  describe('visual-bugs', () => {
    const image = {
      selector: '#logo',
      tag: 'img',
      box: box(0, 0, 100, 50),
      src: 'https://example.test/logo.png',
      alt: 'Logo',
      complete: true,
      naturalWidth: 0,
      naturalHeight: 0,
      visible: true,
      decodeFailed: true,
    };

    it('finds a broken image, not one still loading nor an SVG without intrinsic size', () => {
      const found = (images: (typeof image)[]) =>
        ofType(analyze('visual-bugs', { report: report({ images }), png: white }).findings, 'broken-image');
      expect(found([image]).map((f) => [f.selector, f.severity])).to.deep.equal([['#logo', 'serious']]);
      expect(found([{ ...image, complete: false, decodeFailed: false }])).to.deep.equal([]);
      expect(found([{ ...image, src: 'https://example.test/icon.svg', decodeFailed: false }])).to.deep.equal([]);
      expect(found([{ ...image, naturalWidth: 100, naturalHeight: 50, decodeFailed: false }])).to.deep.equal([]);
    });

    it('finds clipped and spilling text and overlaps', () => {
      const clip = {
        selector: '#clip',
        tag: 'div',
        box: box(0, 0, 120, 24),
        kind: 'clipped' as const,
        text: 'too long',
        containerSelector: '#clip',
        containerBox: box(0, 0, 120, 24),
        overflowPx: 192,
        axis: 'x' as const,
      };
      const r = {
        ...withControls(control('#a', box(0, 100, 120, 40)), control('#b', box(80, 112, 120, 40))),
        textIssues: [clip, { ...clip, selector: '#spill', kind: 'overflow' as const }],
      };
      const findings = analyze('visual-bugs', { report: r, png: busy }).findings;
      expect(findings.map((f) => [f.type, f.selector])).to.deep.equal([
        ['clipped-text', '#clip'],
        ['container-overflow', '#spill'],
        ['overlap', '#a'],
      ]);
      expect(findings[0]!.evidence).to.include('192 px');
    });
  });

  describe('blank regions', () => {
    const scan = (buffer: Buffer) => scanBlank(decodePng(buffer));
    /** Content in the given row ranges, white elsewhere. */
    const page = (height: number, content: [number, number][]) =>
      png(60, height, (x, y) => (content.some(([a, b]) => y >= a && y < b) ? textured(x) : WHITE));

    it('calls a one-colour image blank', () => {
      const result = scan(png(50, 400, () => [240, 240, 240]));
      expect(result).to.include({ blank: true, colour: '#f0f0f0' });
      const finding = analyze('visual-bugs', { png: png(50, 400, () => WHITE) }).findings;
      expect(finding.map((f) => [f.type, f.severity])).to.deep.equal([['blank-region', 'serious']]);
    });

    it('finds a flat band of at least 150 px and 20 % of the height between content', () => {
      const result = scan(
        page(1000, [
          [0, 200],
          [500, 1000],
        ]),
      );
      expect(result.bands).to.deep.equal([{ top: 200, height: 300, colour: '#ffffff' }]);
      const findings = analyze('visual-bugs', {
        png: page(1000, [
          [0, 200],
          [500, 1000],
        ]),
      }).findings;
      expect(findings.map((f) => [f.type, f.severity])).to.deep.equal([['blank-region', 'moderate']]);
      expect(findings[0]!.box).to.deep.equal(box(0, 200, 60, 300));
    });

    it('leaves the white below a short page and above its content alone, and small gaps', () => {
      expect(scan(page(1000, [[300, 400]])).bands).to.deep.equal([]); // margin above, white below
      expect(
        scan(
          page(1000, [
            [0, 200],
            [340, 1000],
          ]),
        ).bands,
      ).to.deep.equal([]); // 140 px: under 150
      expect(
        scan(
          page(2000, [
            [0, 200],
            [550, 2000],
          ]),
        ).bands,
      ).to.deep.equal([]); // 350 px of 2000: under 20 %
    });

    it('counts a row with a thin border as flat, a row of text as content', () => {
      const bordered = png(400, 1000, (x, y) => (y < 200 || y >= 700 ? textured(x) : x === 0 || x === 399 ? [0, 0, 0] : WHITE));
      expect(scanBlank(decodePng(bordered)).bands).to.deep.equal([{ top: 200, height: 500, colour: '#ffffff' }]);
    });

    it('does not count the gap above a footer pinned to the bottom of a page that fits its viewport', () => {
      const shot = page(1000, [
        [0, 200],
        [920, 1000],
      ]);
      const fits = report({ viewport: { width: 60, height: 1000 }, document: { width: 60, height: 1000 } });
      expect(ofType(analyze('visual-bugs', { report: fits, png: shot }).findings, 'blank-region')).to.deep.equal([]);
      const taller = report({ viewport: { width: 60, height: 800 }, document: { width: 60, height: 1000 } });
      expect(ofType(analyze('visual-bugs', { report: taller, png: shot }).findings, 'blank-region')).to.have.length(1);
    });
  });

  describe('image difference', () => {
    const base = png(40, 30, (x) => textured(x));

    it('finds no difference between an image and itself, and returns the diff picture', () => {
      const diff = diffImages(base, base);
      expect(diff).to.include({ sameSize: true, diffPixels: 0, diffRatio: 0, width: 40, height: 30 });
      expect(diff.changed).to.equal(null);
      expect(PNG.sync.read(diff.diffPng!)).to.include({ width: 40, height: 30 });
    });

    it('counts the changed pixels and boxes them', () => {
      const changed = png(40, 30, (x, y) => (x >= 5 && x < 15 && y >= 10 && y < 20 ? [200, 0, 200] : textured(x)));
      const diff = diffImages(base, changed);
      expect(diff.diffPixels).to.equal(100);
      expect(diff.diffRatio).to.be.closeTo(100 / 1200, 1e-9);
      expect(diff.changed).to.deep.equal(box(5, 10, 10, 10));
    });

    it('says when sizes differ, counting everything outside the common area', () => {
      const diff = diffImages(
        base,
        png(40, 40, (x) => textured(x)),
      );
      expect(diff).to.include({ sameSize: false, diffPixels: 400, width: 40, height: 40 });
      expect(diff.changed).to.deep.equal(box(0, 30, 40, 10));
      const result = analyze('visual-bugs', { png: base, baselinePng: png(40, 40, (x) => textured(x)) });
      expect(ofType(result.findings, 'baseline-diff')[0]!.message).to.include('sizes differ');
      expect(result.metrics).to.include({ baselineSameSize: 0, diffPixels: 400 });
    });

    it('refuses a threshold outside 0 to 1', () => {
      expect(() => diffImages(base, base, 1.5)).to.throw(RangeError);
      expect(() => analyze('visual-bugs', { png: base, diffThreshold: -1 })).to.throw(RangeError);
    });
  });

  describe('analyze', () => {
    const defects = (): PageReport => ({
      ...withControls(
        control('#icon', box(0, 0, 40, 40), { name: '', nameSource: 'none' }),
        control('#a', box(0, 100, 120, 40)),
        control('#b', box(80, 112, 120, 40)),
      ),
      offScreen: [{ selector: '#promo', tag: 'div', box: box(-2000, 0, 300, 20), revealsOnFocus: false, text: 'Promo' }],
      axe: {
        version: '4.14.1',
        violations: [
          {
            id: 'image-alt',
            impact: 'critical',
            description: 'd',
            help: 'h',
            helpUrl: 'u',
            nodeCount: 1,
            nodes: [{ target: '#img', html: '<img>', failureSummary: 's' }],
          },
        ],
        contrastChecked: true,
        contrastIncomplete: 0,
      },
    });

    it('runs only the image checks without a report, and names what it skipped and why', () => {
      const result = analyze('layout', { png: white });
      expect(result.checksRun).to.deep.equal([]);
      expect(result.skipped.map((s) => s.check)).to.deep.equal([
        'overlap',
        'viewport-overflow',
        'container-overflow',
        'off-screen',
        'small-tap-target',
        'misaligned',
      ]);
      expect(result.skipped[0]!.reason).to.include('no page report');
      const visual = analyze('visual-bugs', { png: white, baselinePng: white });
      expect(visual.checksRun).to.deep.equal(['blank-region', 'baseline-diff']);
      expect(visual.skipped.map((s) => s.check)).to.include('broken-image');
      expect(visual.diffPng).to.be.instanceOf(Buffer);
    });

    it('treats a report that is not one as missing, and a PNG that is not one as unreadable', () => {
      const bogus = { version: 2 } as unknown as PageReport;
      expect(analyze('ui-elements', { report: bogus, png: white }).skipped[0]!.reason).to.match(/^the page report is not valid/);
      const broken = analyze('visual-bugs', { png: Buffer.from('not a png') });
      expect(broken.skipped.find((s) => s.check === 'blank-region')?.reason).to.match(/not a readable PNG/);
    });

    it('comprehensive is the union of the four, each finding once, metrics prefixed', () => {
      const input = { report: defects(), png: busy };
      const parts = (['ui-elements', 'layout', 'accessibility', 'visual-bugs'] as const).map((t) => analyze(t, input));
      const all = analyze('comprehensive', input);
      const key = (f: Finding) => `${f.type} ${f.selector}`;
      expect(new Set(all.findings.map(key))).to.deep.equal(new Set(parts.flatMap((p) => p.findings.map(key))));
      expect(ofType(all.findings, 'overlap')).to.have.length(1); // from layout and visual-bugs, once
      expect(all.metrics).to.include({ 'layout.overlaps': 1, 'ui-elements.unnamed': 1, 'accessibility.impact.critical': 1 });
      expect(all.summary).to.equal(
        'comprehensive: 3 interactive elements listed, 4 problems found (1 critical, 2 serious, 1 moderate); 13 checks run.',
      );
    });

    it('is deterministic, and its report survives a JSON round trip', () => {
      const r = defects();
      expect(analyze('comprehensive', { report: r, png: white })).to.deep.equal(analyze('comprehensive', { report: r, png: white }));
      expect(parsePageReport(JSON.parse(JSON.stringify(r)))).to.deep.equal(r);
    });

    it('bounds what the page said: long strings cut, lists capped, malformed items dropped', () => {
      const many = Array.from({ length: 1000 }, (_, i) => control(`#c${i}`, box(0, i * 50, 80, 40), { name: 'n'.repeat(5000) }));
      const raw = { ...report(), interactive: [{ bogus: true }, ...many], images: 'lots' } as unknown;
      const parsed = parsePageReport(raw);
      expect(parsed.interactive).to.have.length(299); // 300 read, the malformed one dropped
      expect(parsed.interactive[0]!.name).to.have.length(200);
      expect(parsed.images).to.deep.equal([]);
      expect(() => parsePageReport({ ...report(), viewport: { width: Number.NaN, height: 1 } })).to.throw();
    });
  });
});
