import { field, page, type Frame } from './layout.ts';

/**
 * The integration reports page (pure): a form for the report POST /api/integration/report renders
 * as HTML (the figures of the customer's indexing, queries, vision and usage). A GET form: a report
 * changes nothing, so it needs no CSRF token and its address can be bookmarked.
 */
export function reportsPage(view: {
  signedIn: NonNullable<Frame['signedIn']>;
  connected: boolean;
  notice?: Frame['notice'];
  form?: { projectName?: string; collectionName?: string };
}): string {
  const frame = {
    title: 'Integration reports',
    path: '/reports',
    signedIn: view.signedIn,
    ...(view.notice ? { notice: view.notice } : {}),
  };
  if (!view.connected) return page(frame, '<p>Reports cover what your API key did. <a href="/keys">Connect your key</a> to see them.</p>');
  return page(
    frame,
    `<section class="card" aria-labelledby="report">
<h2 id="report">A report of your project</h2>
<p>Indexing, queries, page analyses and usage, with charts, as <code>POST /api/integration/report</code> renders it.</p>
<form method="get" action="/reports/view" class="stack">
${field({ name: 'projectName', label: 'Report title', required: true, maxlength: 200, value: view.form?.projectName ?? 'My project' })}
${field({ name: 'collectionName', label: 'Collection (optional)', hint: 'Leave empty for all your collections.', ...(view.form?.collectionName ? { value: view.form.collectionName } : {}) })}
<button type="submit">Show report</button>
</form>
</section>`,
  );
}
