import { expect } from 'chai';
import { escapeHtml, escapeMarkdown } from '../../../services/integration/report/escape.ts';
import { CONTENT_SECURITY_POLICY, renderHtml } from '../../../services/integration/report/render-html.ts';
import { renderMarkdown } from '../../../services/integration/report/render-markdown.ts';
import type { ProjectReport } from '../../../services/integration/report/report.types.ts';
import { barRows, columnChart, noData, splitBar, svgNumber } from '../../../services/integration/report/svg-charts.ts';
import { emptyReport, HOSTILE, sampleReport } from '../../support/sample-report.ts';

/** Every number in an SVG geometry attribute or a viewBox. */
function svgNumbers(html: string): string[] {
  const numbers: string[] = [];
  for (const m of html.matchAll(/\s(?:x|y|x1|y1|x2|y2|width|height|rx)="([^"]*)"/g)) numbers.push(m[1]!);
  for (const m of html.matchAll(/viewBox="([^"]*)"/g)) numbers.push(...m[1]!.split(' '));
  return numbers;
}

function expectSaneSvg(html: string): void {
  expect(html).not.to.match(/NaN|Infinity|undefined/);
  for (const value of svgNumbers(html))
    expect(Number.isFinite(Number(value)) && value.trim() !== '', `svg number "${value}"`).to.equal(true);
}

/** The page with every (escaped) customer string taken out: what is left is the template's own. */
function template(html: string): string {
  let rest = html;
  for (const value of Object.values(HOSTILE)) rest = rest.replaceAll(escapeHtml(value), '');
  rest = rest.replaceAll('https://shop.example/', '');
  return rest;
}

const svgCount = (html: string): number => html.match(/<svg\b/g)?.length ?? 0;

/** A table row's cells, split on the pipes markdown reads as cell borders (not escaped ones). */
const cells = (row: string): string[] => row.split(/(?<!\\)\|/).slice(1, -1);

describe('project report rendering (unit)', () => {
  describe('markdown', () => {
    const text = renderMarkdown(sampleReport());

    it('escapes what markdown and HTML would read in the names of things', () => {
      expect(escapeMarkdown('a|b *c* _d_ [e](f) `g` <h> & #i\nj\\')).to.equal(
        'a\\|b \\*c\\* \\_d\\_ \\[e\\]\\(f\\) \\`g\\` &lt;h&gt; &amp; \\#i j\\\\',
      );
      expect(text).not.to.include('<script>');
      expect(text).to.include(`# Project report: ${escapeMarkdown(HOSTILE.projectName)}`);
      expect(text).to.include('&lt;script&gt;alert\\(1\\)&lt;/script&gt; \\*Shop\\* \\|');
      expect(text)
        .to.include(escapeMarkdown(HOSTILE.component))
        .and.include(escapeMarkdown(HOSTILE.suite))
        .and.include(escapeMarkdown(HOSTILE.url));
      expect(text).not.to.include('<img');
    });

    it('keeps every table row to its columns, whatever pipes the names hold', () => {
      const tables = text.split('\n\n').filter((block) => block.startsWith('| '));
      expect(tables.length).to.be.greaterThan(8);
      for (const block of tables) {
        const [header, ...rows] = block.trimEnd().split('\n');
        for (const row of rows) expect(cells(row), row).to.have.length(cells(header!).length);
      }
    });

    it('shows the figures', () => {
      expect(text).to.include('## Collections').and.include('## Queries').and.include('## Visual tests').and.include('## Validations');
      expect(text).to.include('Queries: 58, of which 21 answered from the cache (36.2%)');
      expect(text).to.include('p50 42 ms, p95 180 ms, max 912 ms');
      expect(text).to.include('| critical | 1 |').and.include('| serious | 2 |');
      expect(text).to.include('| Screenshots analyzed | 14 | unlimited | unlimited |');
      expect(text).to.include('Validations: 5 (3 valid, 1 invalid, 1 undecided)');
      expect(text).to.include('| 2026-11-09 09:30 UTC | checkout');
    });

    it('says what is missing instead of empty tables', () => {
      const empty = renderMarkdown(emptyReport());
      expect(empty).to.include('_No collections yet._').and.include('_No visual test runs yet._').and.include('_No validations yet._');
      const withoutMetrics = renderMarkdown({ ...emptyReport(), metrics: undefined });
      expect(withoutMetrics).to.include('includeMetrics: false').and.not.include('## Queries');
    });
  });

  describe('HTML', () => {
    const html = renderHtml(sampleReport());

    it('is one page with the strict policy, and nothing it could fetch or run', () => {
      expect(html.startsWith('<!doctype html>')).to.equal(true);
      expect(html).to.include(`<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY}">`);
      expect(CONTENT_SECURITY_POLICY).to.equal("default-src 'none'; style-src 'unsafe-inline'; img-src data:");
      expect(html.toLowerCase()).not.to.include('<script');
      const own = template(html).toLowerCase();
      for (const forbidden of [
        'http://',
        'https://',
        'src=',
        'href=',
        'url(',
        '@import',
        '<link',
        '<img',
        '<iframe',
        '<object',
        '<foreignobject',
        'xmlns',
      ]) {
        expect(own, forbidden).not.to.include(forbidden);
      }
    });

    it('escapes every name, in text and in attributes', () => {
      expect(html).to.include('<title>Project report: &lt;script&gt;alert(1)&lt;/script&gt; *Shop* | [x](javascript:alert(2))</title>');
      expect(html).to.include(escapeHtml(HOSTILE.suite)).and.include('checkout &quot;main&quot; it&#39;s &lt;b&gt;');
      expect(html).to.include(escapeHtml(HOSTILE.url)).and.include(escapeHtml(HOSTILE.component));
      for (const raw of [HOSTILE.projectName, HOSTILE.suite, HOSTILE.url, HOSTILE.component]) expect(html).not.to.include(raw);
      expect(html).not.to.match(/<b>|onerror=alert\(3\)>/);
    });

    it('draws the five charts, each with a title and a label', () => {
      expect(svgCount(html)).to.equal(5);
      for (const id of ['queries-per-day', 'findings-by-severity', 'usage-vs-quota', 'visual-test-history', 'validation-verdicts']) {
        const svg = new RegExp(
          `<svg class="chart" id="${id}"[^>]*role="img" aria-label="[^"]+"[^>]*><title>[^<]+</title><desc id="${id}-desc">`,
        );
        expect(html, id).to.match(svg);
      }
      expectSaneSvg(html);
    });

    it('shows the figures', () => {
      for (const figure of [
        '58',
        '36.2%',
        '42 ms',
        '449',
        '2 / 4',
        '3 / 5',
        '31',
        '58 of 1,000',
        '449 of 500',
        '14 used · unlimited',
        'valid 3 (60%)',
        '>12</text>',
      ]) {
        expect(html, figure).to.include(figure);
      }
      expect(html).to.include('<td>axe:color-contrast</td><td class="num">7</td>');
      expect(html).to.include('2026-11-03 09:30 UTC');
    });

    it('says "no data yet" instead of drawing empty charts, with no NaN anywhere', () => {
      const empty = renderHtml(emptyReport());
      expect(svgCount(empty)).to.equal(1); // the quotas, all at 0 or unlimited
      expect(empty)
        .to.include('No queries yet.')
        .and.include('No analyses yet.')
        .and.include('No visual test runs yet.')
        .and.include('No validations yet.');
      expectSaneSvg(empty);
    });

    it('draws a zero maximum without dividing by it', () => {
      const report: ProjectReport = emptyReport();
      report.metrics!.vision = {
        captures: 2,
        analyses: 2,
        findings: { bySeverity: { minor: 0, moderate: 0, serious: 0, critical: 0 }, byType: [] },
      };
      report.metrics!.queries.perDay = [{ day: '2026-11-01', count: 0 }];
      const page = renderHtml(report);
      expect(svgCount(page)).to.equal(3);
      expectSaneSvg(page);
      const text = { id: 't', title: 'T', description: 'D' };
      for (const svg of [
        columnChart(text, [{ label: 'a', tick: 'a', segments: [{ label: 'x', value: 0, color: '#000' }] }]),
        barRows(text, [
          { label: 'a', value: 5, max: 0, valueLabel: '5', color: '#000' },
          { label: 'b', value: Number.NaN, max: 10, valueLabel: '?', color: '#000' },
        ]),
      ]) {
        expect(svg.startsWith('<svg')).to.equal(true);
        expectSaneSvg(svg);
      }
      expect(splitBar(text, [{ label: 'a', value: 0, color: '#000' }])).to.equal(noData());
      expect(columnChart(text, [])).to.equal(noData());
      expect(barRows(text, [], 'Nothing.')).to.equal('<p class="no-data">Nothing.</p>');
      expect([svgNumber(Number.NaN), svgNumber(Infinity), svgNumber(1 / 3), svgNumber(-0.004)]).to.deep.equal(['0', '0', '0.33', '0']);
    });

    it('escapes chart labels and tooltips too', () => {
      const svg = columnChart({ id: 'x" onload="alert(1)', title: '<t>', description: '"d"' }, [
        { label: '<l>', tick: '"t"', segments: [{ label: '<s>', value: 1, color: '"><script>' }] },
      ]);
      expect(svg).not.to.match(/<t>|<l>|<s>|<script>|" onload/);
      expect(svg).to.include('id="x--onload--alert-1-"');
    });
  });
});
