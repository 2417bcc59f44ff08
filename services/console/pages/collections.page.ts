import type { CollectionAnswer, IndexJobAnswer } from '../upstream.ts';
import { csrfField, field, h, page, when, type Frame } from './layout.ts';

/** The collections page and an index job's page (pure), over the rag service's routes. */

export interface CollectionsView {
  signedIn: NonNullable<Frame['signedIn']>;
  /** null: no key connected. */
  collections: CollectionAnswer[] | null;
  notice?: Frame['notice'];
  /** What the set-up form held, kept on an error. */
  form?: { collectionName?: string; projectPath?: string };
}

function jobCell(job: IndexJobAnswer | null): string {
  if (!job) return 'never indexed';
  const link = `<a href="/collections/jobs/${encodeURIComponent(job.jobId)}">${h(job.status)}</a>`;
  if (job.status === 'completed') return `${link}, ${when(job.finishedAt)}`;
  if (job.status === 'failed') return `${link}${job.error ? `: ${h(job.error)}` : ''}`;
  return `${link} (${job.filesIndexed ?? 0} files so far)`;
}

export function collectionsPage(view: CollectionsView): string {
  const frame = { title: 'Collections', path: '/collections', signedIn: view.signedIn, ...(view.notice ? { notice: view.notice } : {}) };
  if (view.collections === null)
    return page(frame, '<p>Collections belong to your API key. <a href="/keys">Connect your key</a> to see and index them.</p>');
  const csrf = view.signedIn.csrf;
  const rows = view.collections
    .map(
      (c) => `<tr data-collection="${h(c.collectionName)}">
<th scope="row">${h(c.collectionName)}</th>
<td>${h(c.projectPath ?? '(pushed files)')}</td>
<td data-files>${c.files}</td><td data-chunks>${c.chunks}</td>
<td>${jobCell(c.lastJob)}</td>
<td><form method="post" action="/collections/index">${csrfField(csrf)}<input type="hidden" name="collectionName" value="${h(c.collectionName)}"><button type="submit">Re-index<span class="visually-hidden"> ${h(c.collectionName)}</span></button></form></td>
<td><form method="post" action="/collections/delete" class="delete">${csrfField(csrf)}<input type="hidden" name="collectionName" value="${h(c.collectionName)}"><div class="choice"><input type="checkbox" id="confirm-${h(c.collectionName)}" name="confirm" value="yes" required><label for="confirm-${h(c.collectionName)}">Delete its index<span class="visually-hidden"> of ${h(c.collectionName)}</span>, not the folder</label></div><button type="submit" class="secondary">Delete<span class="visually-hidden"> ${h(c.collectionName)}</span></button></form></td>
</tr>`,
    )
    .join('');
  const table =
    view.collections.length === 0
      ? '<p>No collections yet: set one up below.</p>'
      : `<div class="scroll" role="region" aria-label="Collections table, scrolls sideways" tabindex="0"><table>
<thead><tr><th scope="col">Name</th><th scope="col">Folder</th><th scope="col">Files</th><th scope="col">Chunks</th><th scope="col">Last index job</th><th scope="col"><span class="visually-hidden">Re-index</span></th><th scope="col"><span class="visually-hidden">Delete</span></th></tr></thead>
<tbody>${rows}</tbody></table></div>`;
  return page(
    frame,
    `<section class="card" aria-labelledby="yours"><h2 id="yours">Your collections</h2>${table}</section>
<section class="card" aria-labelledby="setup">
<h2 id="setup">Set up a collection</h2>
<p>A collection indexes a project folder on the server (under the roots your operator gave you) for code retrieval. Setting up an existing name again changes its folder.</p>
<form method="post" action="/collections" class="stack">
${csrfField(csrf)}
${field({ name: 'collectionName', label: 'Name', required: true, maxlength: 100, ...(view.form?.collectionName ? { value: view.form.collectionName } : {}) })}
${field({ name: 'projectPath', label: 'Project folder', required: true, hint: 'An absolute path on the server.', ...(view.form?.projectPath ? { value: view.form.projectPath } : {}) })}
<button type="submit">Set up and index</button>
</form>
</section>`,
  );
}

export function jobPage(view: { signedIn: NonNullable<Frame['signedIn']>; job: IndexJobAnswer }): string {
  const { job } = view;
  const running = job.status === 'queued' || job.status === 'running';
  return page(
    { title: `Index job of ${job.collectionName}`, path: '', signedIn: view.signedIn, ...(running ? { refreshSeconds: 2 } : {}) },
    `<section class="card" aria-labelledby="job">
<h2 id="job">Job ${h(job.jobId)}</h2>
<dl class="facts">
<dt>Status</dt><dd data-status="${h(job.status)}">${h(job.status)}${running ? ' (this page reloads every 2 seconds)' : ''}</dd>
<dt>Files indexed</dt><dd>${job.filesIndexed ?? 0}</dd>
<dt>Files unchanged</dt><dd>${job.filesUnchanged ?? 0}</dd>
<dt>Files skipped</dt><dd>${job.filesSkipped ?? 0}</dd>
<dt>Chunks</dt><dd>${job.chunks ?? 0}</dd>
<dt>Started</dt><dd>${when(job.startedAt)}</dd>
<dt>Finished</dt><dd>${when(job.finishedAt)}</dd>
${job.error ? `<dt>Error</dt><dd>${h(job.error)}</dd>` : ''}
</dl>
<p><a href="/collections">Back to your collections</a></p>
</section>`,
  );
}
