import { expect } from 'chai';
import { analyze } from '../../../services/vision/analysis/analyze.ts';
import { inspectPage } from '../../../services/vision/analysis/page-report.ts';
import type { AnalysisType, Finding, PageReport } from '../../../services/vision/analysis/types.ts';
import { BrowserPool } from '../../../services/vision/browser/browser-pool.ts';
import { capture } from '../../../services/vision/browser/capture.ts';
import { parseAllowList } from '../../../services/platform/allow-list.ts';
import { chromiumForTests, processGone } from './chromium-under-test.ts';
import { startFixtureSite, type FixtureSite } from './fixture-site.ts';
import { decodePng } from './png-pixels.ts';

/**
 * The analyses on real captures: test/fixtures/vision/analysis/defects.html holds one of each defect
 * (by id), clean.html the same kinds of content built right.
 *
 * "Nothing found" on clean.html is strict here: no finding of any severity except ui-elements'
 * listing of the interactive elements (type `interactive-element`, severity minor).
 */

interface Shot {
  png: Buffer;
  report: PageReport;
}

const ANALYSES: readonly Exclude<AnalysisType, 'comprehensive'>[] = ['ui-elements', 'layout', 'accessibility', 'visual-bugs'];
const pairs = (findings: readonly Finding[]) => findings.map((f) => `${f.type} ${f.selector ?? ''}`.trim());
const problems = (findings: readonly Finding[]) => findings.filter((f) => f.type !== 'interactive-element');

describe('Vision analyses on real captures (integration)', function () {
  this.timeout(60_000);
  let site: FixtureSite;
  let pool: BrowserPool;
  const shots = new Map<string, Shot>();

  /** A full-page capture at 1000×1400, taller than clean.html, so its shot has white below the content. */
  const shoot = async (path: string): Promise<Shot> => {
    const result = await capture(
      pool,
      { url: `${site.origin}${path}`, fullPage: true, viewport: { width: 1000, height: 1400 }, timeoutMs: 30_000, maxBytes: 5_000_000 },
      (page, left) => inspectPage(page, left, { probes: [{ selector: 'h1' }, { selector: '#nowhere' }] }),
    );
    return { png: result.png, report: result.inspection };
  };
  const shot = (path: string): Shot => {
    const found = shots.get(path);
    if (!found) throw new Error(`${path} was not captured`);
    return found;
  };

  before(async function () {
    this.timeout(600_000); // a first run provisions Chromium
    const executablePath = chromiumForTests();
    site = await startFixtureSite();
    pool = new BrowserPool({ executablePath, allowList: parseAllowList(`127.0.0.1:${site.port}`), maxConcurrent: 2 });
    for (const path of ['/analysis/defects', '/analysis/clean']) shots.set(path, await shoot(path));
  });

  after(async () => {
    const pid = await pool?.browserPid();
    await pool?.close();
    await site?.close();
    if (pid !== undefined) expect(processGone(pid), `browser ${pid} still running after close()`).to.equal(true);
  });

  it('records a bounded, JSON-serializable page report with the probes answered', () => {
    const { report } = shot('/analysis/defects');
    expect(report.version).to.equal(1);
    expect(JSON.parse(JSON.stringify(report))).to.deep.equal(report);
    expect(report.viewport).to.deep.equal({ width: 1000, height: 1400 });
    expect(report.document.width).to.be.greaterThan(1600); // the too-wide banner
    expect(report.errors).to.deep.equal([]);
    expect(report.axe).to.include({ version: '4.14.1', contrastChecked: true });
    expect(report.probes[0]).to.include({ selector: 'h1', exists: true, visible: true, text: 'Defects', count: 1 });
    expect(report.probes[1]).to.include({ selector: '#nowhere', exists: false, visible: false });
    expect(JSON.stringify(report).length).to.be.lessThan(200_000);
  });

  it('ui-elements lists the controls with roles and names, and flags the unlabeled icon button', () => {
    const result = analyze('ui-elements', shot('/analysis/defects'));
    const listed = result.findings.filter((f) => f.type === 'interactive-element');
    expect(listed.map((f) => [f.selector, f.message])).to.deep.include.members([
      ['#print', 'button "Print"'],
      ['#tiny', 'link "Help"'],
      ['#icon-button', 'button (no accessible name)'],
    ]);
    expect(pairs(problems(result.findings))).to.deep.equal(['unnamed-control #icon-button']);
    expect(result.metrics).to.include({ unnamed: 1, 'role.link': 1 });
  });

  it('layout finds the overlap, the overflows, the off-screen element, the tiny target and the misaligned card', () => {
    const found = pairs(analyze('layout', shot('/analysis/defects')).findings);
    expect(found).to.have.members([
      'overlap #overlap-a',
      'viewport-overflow #too-wide',
      'container-overflow #spilling',
      'off-screen #off-screen',
      'small-tap-target #tiny',
      'misaligned #card-2',
    ]);
  });

  it('accessibility finds the unlabeled button, the image without alt and the low-contrast text', () => {
    const result = analyze('accessibility', shot('/analysis/defects'));
    expect(pairs(result.findings)).to.have.members([
      'axe:button-name #icon-button',
      'axe:image-alt #no-alt',
      'axe:color-contrast #low-contrast',
    ]);
    const contrast = result.findings.find((f) => f.type === 'axe:color-contrast');
    expect(contrast?.severity).to.equal('serious');
    expect(contrast?.evidence).to.include('#aaaaaa').and.include('dequeuniversity.com');
    expect(result.checksRun).to.include('axe:color-contrast');
  });

  it('visual-bugs finds the broken image, the clipped and spilling text and the overlap', () => {
    const found = pairs(analyze('visual-bugs', shot('/analysis/defects')).findings);
    expect(found).to.have.members(['broken-image #broken', 'clipped-text #clipped', 'container-overflow #spilling', 'overlap #overlap-a']);
  });

  it('comprehensive is the union of the four analyses', () => {
    const input = shot('/analysis/defects');
    const all = analyze('comprehensive', input);
    const union = new Set(ANALYSES.flatMap((t) => pairs(analyze(t, input).findings)));
    expect(new Set(pairs(all.findings))).to.deep.equal(union);
    expect(all.findings.filter((f) => f.type === 'overlap')).to.have.length(1);
  });

  it('finds nothing on the clean page, with any analysis', () => {
    const input = shot('/analysis/clean');
    for (const type of [...ANALYSES, 'comprehensive'] as const) {
      const result = analyze(type, input);
      expect(pairs(problems(result.findings)), type).to.deep.equal([]);
      expect(result.skipped, type).to.deep.equal([]);
    }
    const ui = analyze('ui-elements', input);
    expect(ui.findings.length).to.be.greaterThan(10);
    expect(ui.findings.every((f) => f.severity === 'minor')).to.equal(true);
    // The screenshot really is taller than the content: white below it that must not count as blank.
    const image = decodePng(input.png);
    expect(image.pixel(500, image.height - 50).slice(0, 3)).to.deep.equal([255, 255, 255]);
  });

  it('runs axe under a Content-Security-Policy that forbids every script', async () => {
    const { report } = await shoot('/analysis/clean-csp');
    expect(report.axe.version).to.equal('4.14.1');
    expect(report.axe.violations).to.deep.equal([]);
    expect(report.interactive.length).to.be.greaterThan(10);
  });

  it('sees a changed page in the visual diff, and the same page twice as unchanged', async () => {
    const before = shot('/analysis/clean');
    const again = await shoot('/analysis/clean');
    const same = analyze('visual-bugs', { ...again, baselinePng: before.png });
    expect(same.metrics.diffRatio).to.be.lessThan(0.0001);
    expect(same.findings).to.deep.equal([]);

    const changed = await shoot('/analysis/clean-changed');
    const result = analyze('visual-bugs', { ...changed, baselinePng: before.png });
    expect(result.metrics.diffPixels).to.be.greaterThan(100);
    expect(result.metrics.baselineSameSize).to.equal(1);
    const diff = result.findings.find((f) => f.type === 'baseline-diff');
    const heading = changed.report.probes[0]?.box;
    expect(diff?.box, 'the changed area').to.not.equal(undefined);
    expect(heading).to.not.equal(undefined);
    // The change is the heading: the changed area starts on its line.
    expect(diff!.box!.y).to.be.within(heading!.y - 2, heading!.y + heading!.height);
    expect(result.diffPng).to.be.instanceOf(Buffer);
    const picture = decodePng(result.diffPng!);
    expect([picture.width, picture.height]).to.deep.equal([1000, 1400]);
  });
});
