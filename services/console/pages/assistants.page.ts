import type { ConnectionsAnswer, InteractionAnswer } from '../../accounts/oauth/oauth-input.ts';
import { csrfField, field, h, page, when, type Frame } from './layout.ts';

/** The pages of assistants connected by OAuth (pure): the consent page and the list of connected assistants. */

const SCOPE_WORDS: Record<string, string> = {
  mcp: 'Call the svc MCP server’s tools for you: search and index your code collections, capture and check pages, write reports.',
  offline_access: 'Stay connected after this session: it renews its access until you disconnect it.',
};

export interface ConsentView {
  signedIn: NonNullable<Frame['signedIn']>;
  request: InteractionAnswer;
  /** The key connected in this console, if any: its last four and tier. */
  connected: { last4: string; tier: string } | null;
  notice?: Frame['notice'];
}

/**
 * The host an assistant's client ID metadata document came from (its client_id is that https URL):
 * unlike its name, that much svc did check, by fetching the document there.
 */
function documentHost(clientId: string): string | undefined {
  const url = URL.parse(clientId);
  return url?.protocol === 'https:' ? url.host : undefined;
}

export function consentPage(view: ConsentView): string {
  const { request } = view;
  const scopes = request.scopes
    .filter((s) => s in SCOPE_WORDS)
    .map((s) => `<li><strong>${h(s)}</strong>: ${h(SCOPE_WORDS[s] ?? '')}</li>`)
    .join('');
  const subscription = view.connected
    ? `<p>Its calls count against the subscription of your connected key <code>…${h(view.connected.last4)}</code> (tier <strong data-tier>${h(view.connected.tier)}</strong>): the same quotas and rate limit as the key.</p>
<p>To count them against another subscription, paste that key instead:</p>
${field({ name: 'apiKey', label: 'Another API key (optional)', autocomplete: 'off', hint: 'svc_ and 33 letters or digits. Left empty: the connected key above.' })}`
    : `<p>Its calls count against the subscription of an API key of yours: the same quotas and rate limit as the key. Paste the key (from the e-mail it came in):</p>
${field({ name: 'apiKey', label: 'API key', autocomplete: 'off', required: true, hint: 'svc_ and 33 letters or digits.' })}`;
  return page(
    {
      title: `Connect ${request.client.name}?`,
      path: '',
      signedIn: view.signedIn,
      ...(view.notice ? { notice: view.notice } : {}),
    },
    `<section class="card" aria-labelledby="who">
<h2 id="who">The assistant</h2>
<dl class="facts">
<dt>Name</dt><dd data-client-name>${h(request.client.name)}</dd>
<dt>Returns to</dt><dd>${h(request.client.redirectHost)}</dd>
${request.client.uri ? `<dt>Its site</dt><dd>${h(request.client.uri)}</dd>` : ''}
${documentHost(request.client.id) ? `<dt>Described at</dt><dd data-client-document>${h(documentHost(request.client.id)!)}</dd>` : ''}
</dl>
<p>It names itself; svc has not checked who made it. Connect it only if you started this from your assistant just now.</p>
</section>
<section class="card" aria-labelledby="may">
<h2 id="may">It will be able to</h2>
<ul>${scopes}</ul>
</section>
<form method="post" action="/oauth/connect/${h(encodeURIComponent(request.uid))}" class="stack">
${csrfField(view.signedIn.csrf)}
<section class="card" aria-labelledby="sub">
<h2 id="sub">Subscription</h2>
${subscription}
</section>
<p>You can disconnect it at any time on the <a href="/assistants">Assistants</a> page; it is refused at once.</p>
<div class="actions"><button type="submit" name="decision" value="allow">Connect</button> <button type="submit" name="decision" value="deny" class="secondary">Do not connect</button></div>
</form>`,
  );
}

export function assistantsPage(view: {
  signedIn: NonNullable<Frame['signedIn']>;
  connections: ConnectionsAnswer['connections'];
  notice?: Frame['notice'];
}): string {
  const rows = view.connections
    .map(
      (c) => `<tr data-grant="${h(c.grantId)}">
<th scope="row">${h(c.clientName)}</th><td>${h(when(c.connectedAt))}</td><td>${h(c.lastUsedAt ? when(c.lastUsedAt) : 'not yet')}</td><td>${h(c.tier)} · key …${h(c.keyLast4)}</td>
<td><form method="post" action="/assistants/${h(encodeURIComponent(c.grantId))}/disconnect">${csrfField(view.signedIn.csrf)}<button type="submit" aria-label="Disconnect ${h(c.clientName)}">Disconnect</button></form></td>
</tr>`,
    )
    .join('');
  const table =
    view.connections.length === 0
      ? '<p>No assistant is connected. An assistant that supports MCP authorization asks you to connect it here when you add svc to it.</p>'
      : `<div class="scroll" role="region" aria-label="Connected assistants, scrolls sideways" tabindex="0"><table>
<thead><tr><th scope="col">Assistant</th><th scope="col">Connected</th><th scope="col">Last used</th><th scope="col">Counts against</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${rows}</tbody></table></div>`;
  return page(
    { title: 'Connected assistants', path: '/assistants', signedIn: view.signedIn, ...(view.notice ? { notice: view.notice } : {}) },
    `<p>Assistants you let call the svc MCP server for you (OAuth). Disconnecting one ends its access at once; it asks you again the next time it connects.</p>
${table}`,
  );
}
