import type { z } from 'zod';
import type { RunAnswer } from '../../vision/app/run-review.ts';
import type { runsAnswer } from '../../vision/review-schemas.ts';
import { csrfField, field, h, page, when, type Frame } from './layout.ts';

/**
 * The visual test runs pages (pure): the key's recent runs (GET /api/glm/runs), or one opened by its
 * id (POST /api/glm/test answers it), its checks and snapshots, accept or reject each snapshot of the suite's
 * latest run, and open the review page the vision service renders (baseline, current, diff).
 */

export function runsPage(view: {
  signedIn: NonNullable<Frame['signedIn']>;
  connected: boolean;
  notice?: Frame['notice'];
  runId?: string;
  /** The key's recent runs, newest first (none listed when the list could not be read). */
  recent?: z.output<typeof runsAnswer>['runs'];
}): string {
  const frame = { title: 'Visual test runs', path: '/runs', signedIn: view.signedIn, ...(view.notice ? { notice: view.notice } : {}) };
  if (!view.connected) return page(frame, '<p>Test runs belong to your API key. <a href="/keys">Connect your key</a> to review them.</p>');
  const recent = view.recent ?? [];
  const rows = recent
    .map(
      (r) => `<tr data-run="${h(r.runId)}">
<th scope="row"><a href="/runs/${h(r.runId)}">${h(r.suite)}<span class="visually-hidden">, run of ${h(when(r.ranAt))}</span></a></th>
<td>${h(r.url)}</td><td>${r.passed} passed, ${r.failed} failed</td><td>${h(when(r.ranAt))}</td>
</tr>`,
    )
    .join('');
  const list =
    recent.length === 0
      ? '<p>No runs yet: run a suite with <code>POST /api/glm/test</code> or the <code>glm_test</code> tool.</p>'
      : `<div class="scroll" role="region" aria-label="Recent runs table, scrolls sideways" tabindex="0"><table>
<thead><tr><th scope="col">Suite</th><th scope="col">Page</th><th scope="col">Checks</th><th scope="col">When</th></tr></thead>
<tbody>${rows}</tbody></table></div>`;
  return page(
    frame,
    `<section class="card" aria-labelledby="recent"><h2 id="recent">Recent runs</h2>${list}</section>
<section class="card" aria-labelledby="open">
<h2 id="open">Open a run</h2>
<p>Each run of <code>POST /api/glm/test</code> answers its <code>runId</code>; paste it here to review its snapshots.</p>
<form method="get" action="/runs" class="stack">
${field({ name: 'runId', label: 'Run id', required: true, hint: 'A UUID, e.g. 0f8c…-…', ...(view.runId ? { value: view.runId } : {}) })}
<button type="submit">Open run</button>
</form>
</section>`,
  );
}

function decisionForms(csrf: string, run: RunAnswer, snapshot: string): string {
  if (!run.latest) return '<span class="note">only the latest run of a suite can be decided</span>';
  return (['accept', 'reject'] as const)
    .map(
      (verb) =>
        `<form class="inline" method="post" action="/runs/${encodeURIComponent(run.runId)}/snapshots/${encodeURIComponent(snapshot)}/${verb}">${csrfField(csrf)}<button type="submit"${verb === 'reject' ? ' class="secondary"' : ''}>${verb === 'accept' ? 'Accept' : 'Reject'}<span class="visually-hidden"> ${h(snapshot)}</span></button></form>`,
    )
    .join(' ');
}

export function runPage(view: { signedIn: NonNullable<Frame['signedIn']>; run: RunAnswer; notice?: Frame['notice'] }): string {
  const { run } = view;
  const checks = run.checks
    .map(
      (c) =>
        `<tr><th scope="row">${h(c.name)}</th><td>${h(c.type)}</td><td data-check-status="${h(c.status)}">${h(c.status)}</td><td>${h(c.message)}</td></tr>`,
    )
    .join('');
  const snapshots = run.snapshots
    .map(
      (s) => `<tr data-snapshot="${h(s.snapshot)}">
<th scope="row">${h(s.snapshot)}</th><td>${h(s.status)}</td>
<td>${s.diffRatio === null ? '—' : `${(s.diffRatio * 100).toFixed(2)} %`}</td>
<td data-decision="${h(s.decision ?? 'undecided')}">${h(s.decision ?? (s.isBaseline ? 'baseline' : 'undecided'))}</td>
<td>${decisionForms(view.signedIn.csrf, run, s.snapshot)}</td></tr>`,
    )
    .join('');
  return page(
    { title: `Run of ${run.suite}`, path: '', signedIn: view.signedIn, ...(view.notice ? { notice: view.notice } : {}) },
    `<section class="card" aria-labelledby="run">
<h2 id="run">Run ${h(run.runId)}</h2>
<dl class="facts">
<dt>Suite</dt><dd>${h(run.suite)}</dd>
<dt>Page</dt><dd>${h(run.url)}</dd>
<dt>Ran</dt><dd>${when(run.ranAt)}</dd>
<dt>Checks</dt><dd data-passed="${run.passed}" data-failed="${run.failed}">${run.passed} passed, ${run.failed} failed</dd>
</dl>
<p><a class="button" href="/runs/${encodeURIComponent(run.runId)}/review">Open the review page (baseline, current and diff side by side)</a></p>
</section>
<section class="card" aria-labelledby="snapshots">
<h2 id="snapshots">Snapshots</h2>
<p>Accepting a snapshot makes its capture the baseline of that check and viewport; rejecting records the decision and keeps the baseline.</p>
<div class="scroll" role="region" aria-label="Snapshots table, scrolls sideways" tabindex="0"><table>
<thead><tr><th scope="col">Snapshot</th><th scope="col">Status</th><th scope="col">Difference</th><th scope="col">Decision</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${snapshots || '<tr><td colspan="5">This run has no visual checks.</td></tr>'}</tbody></table></div>
</section>
<section class="card" aria-labelledby="checks">
<h2 id="checks">Checks</h2>
<div class="scroll" role="region" aria-label="Checks table, scrolls sideways" tabindex="0"><table>
<thead><tr><th scope="col">Check</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col">Message</th></tr></thead>
<tbody>${checks}</tbody></table></div>
<p><a href="/runs">Open another run</a></p>
</section>`,
  );
}
