import { escapeHtml as esc } from '../../platform/html-escape.ts';
import type { RunAnswer, SnapshotAnswer } from '../app/run-review.ts';

/** An image of the page: its bytes inline, or why it is not (deleted, or past the page's budget). */
export type PageImage = { png: Buffer } | { missing: 'deleted' | 'too-large' };

export interface ReviewImages {
  /** By screenshot id or diff id; an id absent here is read as deleted. */
  get(id: string): PageImage | undefined;
}

/**
 * The page's policy: nothing to fetch or connect to, images only as data: URIs, and the one style
 * sheet and one script this render wrote (by nonce). A name that slipped past escaping could
 * neither load nor run anything; escaping is what keeps it from changing the page at all.
 */
export const reviewPolicy = (nonce: string): string =>
  `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; img-src data:; base-uri 'none'; form-action 'none'`;

const STYLE = `
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #f6f7f9; color: #202124; font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; }
main { max-width: 1400px; margin: 0 auto; padding: 24px; }
h1 { font-size: 24px; margin: 0 0 4px; overflow-wrap: anywhere; }
h2 { font-size: 18px; margin: 24px 0 12px; }
h3 { font-size: 15px; margin: 0 0 6px; overflow-wrap: anywhere; }
.meta { color: #5f6368; margin: 0 0 16px; overflow-wrap: anywhere; }
section.snapshot { background: #fff; border: 1px solid #e3e6ea; border-radius: 8px; padding: 16px; margin: 0 0 16px; }
.badge { display: inline-block; padding: 0 8px; border-radius: 10px; font-size: 12px; font-weight: 600; margin-right: 6px; }
.passed { background: #e6f4ea; color: #137333; }
.failed { background: #fce8e6; color: #a50e0e; }
.accepted { background: #e8f0fe; color: #174ea6; }
.rejected { background: #fef7e0; color: #8a4a00; }
.undecided { background: #f1f3f4; color: #5f6368; }
.figures { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: 12px; margin: 12px 0; }
figure { margin: 0; }
figcaption { color: #5f6368; font-size: 12px; margin-bottom: 4px; }
figure img, .compare img { display: block; max-width: 100%; height: auto; border: 1px solid #e3e6ea; }
.missing { color: #5f6368; font-style: italic; }
.compare { position: relative; display: inline-block; max-width: 100%; }
.compare .over { position: absolute; inset: 0; overflow: hidden; clip-path: inset(0 50% 0 0); }
.compare .over img { width: 100%; }
.slider input { display: block; width: 100%; max-width: 600px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; background: #fff; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid #eef0f3; vertical-align: top; overflow-wrap: anywhere; }
code { font-size: 12px; overflow-wrap: anywhere; }
`;

// Copies each slider image from its figure (so each PNG is inlined once), and moves the clip with the range.
const SCRIPT = `
for (const box of document.querySelectorAll('.slider')) {
  for (const img of box.querySelectorAll('img[data-from]')) img.src = document.getElementById(img.dataset.from).src;
  const over = box.querySelector('.over');
  const range = box.querySelector('input');
  const show = () => { over.style.clipPath = 'inset(0 ' + (100 - Number(range.value)) + '% 0 0)'; };
  range.addEventListener('input', show);
  show();
}
`;

const percent = (ratio: number | null): string => (ratio === null ? '—' : `${(ratio * 100).toFixed(ratio < 0.001 ? 4 : 2)}%`);

function figure(caption: string, id: string, imageId: string | null, images: ReviewImages, none: string): string {
  const head = `<figure><figcaption>${esc(caption)}</figcaption>`;
  if (imageId === null) return `${head}<p class="missing">${esc(none)}</p></figure>`;
  const image = images.get(imageId) ?? { missing: 'deleted' };
  if ('missing' in image) {
    const why = image.missing === 'deleted' ? 'no longer stored' : 'too large to inline: GET it with your key';
    return `${head}<p class="missing">${esc(why)} (<code>${esc(imageId)}</code>)</p></figure>`;
  }
  return `${head}<img id="${id}" alt="${esc(caption)}" src="data:image/png;base64,${image.png.toString('base64')}"></figure>`;
}

function snapshotSection(s: SnapshotAnswer, index: number, images: ReviewImages, runId: string): string {
  const id = `s${index}`;
  const decision = s.decision ?? 'undecided';
  const inline = (imageId: string | null): boolean => {
    const image = imageId === null ? undefined : images.get(imageId);
    return image !== undefined && 'png' in image;
  };
  const slider =
    inline(s.baselineId) && inline(s.screenshotId)
      ? `<div class="slider"><div class="compare"><img alt="baseline" data-from="${id}-baseline"><div class="over"><img alt="current" data-from="${id}-current"></div></div>` +
        `<input type="range" min="0" max="100" value="50" aria-label="${esc(`${s.snapshot}: current (left) over baseline (right)`)}"></div>`
      : '';
  // Snapshot names are A-Z a-z 0-9 _ . - and one @ (input.ts): the @ reads better left as it is.
  const path = `/api/glm/runs/${runId}/snapshots/${encodeURIComponent(s.snapshot).replaceAll('%40', '@')}`;
  return [
    `<section class="snapshot" id="${id}" data-snapshot="${esc(s.snapshot)}" data-decision="${decision}">`,
    `<h3>${esc(s.check)}${s.viewport === null ? '' : ` <span class="meta">@ ${esc(s.viewport)}</span>`}</h3>`,
    `<p><span class="badge ${s.status}">${s.status}</span><span class="badge ${decision}">${decision}${s.decidedAt ? ` ${esc(s.decidedAt)}` : ''}</span>`,
    `diff ${percent(s.diffRatio)}${s.diffPixels === null ? '' : ` (${s.diffPixels} pixels)`}${s.isBaseline ? ' · this capture is the baseline now' : ''}</p>`,
    `<p>${esc(s.message)}</p>`,
    '<div class="figures">',
    figure('Baseline', `${id}-baseline`, s.baselineId, images, 'none compared: this capture became the baseline'),
    figure('Current', `${id}-current`, s.screenshotId, images, ''),
    figure('Diff', `${id}-diff`, s.diffId, images, 'no diff image'),
    '</div>',
    slider,
    `<p class="meta">Accept: <code>POST ${esc(path)}/accept</code> · reject: <code>POST ${esc(path)}/reject</code></p>`,
    '</section>',
  ].join('\n');
}

/**
 * A run as one self-contained page: per viewport, each snapshot's baseline, capture and diff side
 * by side, a slider over baseline and capture, its status and the decision on it.
 */
export function renderReviewHtml(run: RunAnswer, images: ReviewImages, nonce: string): string {
  const groups = new Map<string | null, SnapshotAnswer[]>();
  for (const s of run.snapshots) groups.set(s.viewport, [...(groups.get(s.viewport) ?? []), s]);
  let index = 0;
  const sections = [...groups].map(([viewport, snapshots]) =>
    [
      `<section class="viewport" data-viewport="${esc(viewport ?? '')}">`,
      `<h2>${viewport === null ? 'Viewport' : `Viewport ${esc(viewport)}`}</h2>`,
      ...snapshots.map((s) => snapshotSection(s, index++, images, run.runId)),
      '</section>',
    ].join('\n'),
  );
  const others = run.checks.filter((c) => c.type !== 'visual');
  const otherTable =
    others.length === 0
      ? ''
      : `<h2>Other checks</h2><table><tr><th>check</th><th>type</th><th>status</th><th>message</th></tr>${others
          .map(
            (c) =>
              `<tr><td>${esc(c.name)}</td><td>${c.type}</td><td><span class="badge ${c.status}">${c.status}</span></td><td>${esc(c.message)}</td></tr>`,
          )
          .join('')}</table>`;
  const title = `Review of ${run.suite}`;
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${reviewPolicy(nonce)}">`,
    '<meta name="referrer" content="no-referrer">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${esc(title)}</title>`,
    `<style nonce="${nonce}">${STYLE}</style>`,
    '</head>',
    '<body><main>',
    `<h1>${esc(title)}</h1>`,
    `<p class="meta">${esc(run.url)} · ran ${esc(run.ranAt)} · ${run.passed} passed, ${run.failed} failed · run <code>${esc(run.runId)}</code>${
      run.latest ? '' : ' · <strong>a later run exists: decisions are taken on the latest run only</strong>'
    }</p>`,
    run.snapshots.length === 0 ? '<p class="missing">This run has no visual check.</p>' : sections.join('\n'),
    otherTable,
    '</main>',
    `<script nonce="${nonce}">${SCRIPT}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
