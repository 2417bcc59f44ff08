import type { AuditAnswer } from '../../audit/audit-answer.ts';
import { h, page, type Frame } from './layout.ts';

/**
 * The audit log page (pure): GET /audit's entries for the connected team key, newest first, a
 * filter by kind of action, and a link to older entries. Other tiers are told what has it.
 */

export const ACTION_FAMILIES = [
  ['', 'Everything'],
  ['key.', 'Keys'],
  ['account.', 'Log-ins, log-outs and passwords'],
  ['subscription.', 'Subscription'],
  ['rag.', 'Collections'],
] as const;

export interface AuditView {
  signedIn: NonNullable<Frame['signedIn']>;
  /** null: no key connected; 'not-team': the key's tier has no audit log. */
  log: AuditAnswer | null | 'not-team';
  action: string;
  notice?: Frame['notice'];
}

// To the second, unlike the layout's `when`: entries of one minute must still read in their order.
const when = (iso: string) => `${iso.slice(0, 19).replace('T', ' ')} UTC`;
const detailsOf = (d: Record<string, string | number | boolean | null>) =>
  Object.entries(d)
    .filter(([, v]) => v !== null)
    .map(([k, v]) => `${k}: ${String(v)}`)
    .join(', ');

export function auditPage(view: AuditView): string {
  const frame = { title: 'Audit log', path: '/audit', signedIn: view.signedIn, ...(view.notice ? { notice: view.notice } : {}) };
  if (view.log === null)
    return page(frame, '<p>The audit log belongs to your API key. <a href="/keys">Connect your key</a> to see it.</p>');
  if (view.log === 'not-team')
    return page(
      frame,
      '<p data-audit="not-team">The audit log is part of the team tier: every change to your keys, subscription and collections, every log-in and every refused key check. <a href="/pricing">See the tiers</a>.</p>',
    );
  const options = ACTION_FAMILIES.map(
    ([value, label]) => `<option value="${h(value)}"${value === view.action ? ' selected' : ''}>${h(label)}</option>`,
  ).join('');
  const rows = view.log.entries
    .map(
      (e) => `<tr data-action="${h(e.action)}">
<td>${h(when(e.at))}</td><th scope="row">${h(e.action)}</th><td>${h(e.actor)}</td><td>${h(e.target ?? '')}</td><td>${h(detailsOf(e.details))}</td>
</tr>`,
    )
    .join('');
  const table =
    view.log.entries.length === 0
      ? '<p>Nothing recorded yet.</p>'
      : `<div class="scroll" role="region" aria-label="Audit log table, scrolls sideways" tabindex="0"><table>
<thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Details</th></tr></thead>
<tbody>${rows}</tbody></table></div>`;
  const older = view.log.nextCursor
    ? `<p><a href="/audit?${new URLSearchParams({ ...(view.action ? { action: view.action } : {}), cursor: view.log.nextCursor })}">Older entries</a></p>`
    : '';
  return page(
    frame,
    `<form method="get" action="/audit" class="inline">
<label for="action">Show</label>
<select id="action" name="action">${options}</select>
<button type="submit">Filter</button>
</form>
<p>Kept for ${view.log.retentionDays} days. Nobody can change an entry.</p>
${table}
${older}`,
  );
}
