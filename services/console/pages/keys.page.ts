import type { RotateAnswer, UsageAnswer } from '../../keys/keys-answers.ts';
import { csrfField, field, h, page, when, type Frame } from './layout.ts';

/**
 * The keys page (pure). A key is shown by its last four characters only: the console never shows
 * a whole key, and a new one (after a rotation) goes only by e-mail, as POST /keys/rotate does.
 */

export interface KeysView {
  signedIn: NonNullable<Frame['signedIn']>;
  accountTier: string;
  /** The connected key: its last four, and what GET /usage answered for it (null: it no longer works). */
  connected: { last4: string; usage: UsageAnswer | null } | null;
  /** What a rotation just answered. */
  rotated?: RotateAnswer;
  notice?: Frame['notice'];
  /** KEY_ROTATION_GRACE_SECONDS as the keys service applies it when none is named. */
  graceSeconds: number;
}

/** The last UTC day with any verification of the key, from GET /usage's per-day counts. */
export function lastUsedDay(usage: UsageAnswer): string | null {
  const days = (usage.verifications ?? []).filter((d) => Object.values(d.outcomes).some((n) => n > 0)).map((d) => d.day);
  return days.length === 0 ? null : days.sort().at(-1)!;
}

const masked = (last4: string) => `<code class="key" aria-label="key ending in ${h(last4.split('').join(' '))}">svc_…${h(last4)}</code>`;

function connectForm(csrf: string, intro: string): string {
  return `<section class="card" aria-labelledby="connect">
<h2 id="connect">Connect your key</h2>
<p>${intro}</p>
<form method="post" action="/keys/connect" class="stack">
${csrfField(csrf)}
${field({ name: 'apiKey', label: 'API key', type: 'password', autocomplete: 'off', required: true, hint: 'Starts with svc_. It is kept encrypted in a cookie page scripts cannot read; the console shows only its last four characters.' })}
<button type="submit">Connect key</button>
</form>
</section>`;
}

function rotatedNotice(r: RotateAnswer): string {
  const old = r.replacedLast4 ? `The replaced key ${masked(r.replacedLast4)} ` : 'The replaced key ';
  const until = r.replacedValidUntil ? `${old}keeps working until ${when(r.replacedValidUntil)}.` : `${old}stopped working at once.`;
  return `<section class="card rotated" aria-labelledby="rotated" data-rotated="${h(r.last4)}">
<h2 id="rotated">A new key is on its way by e-mail</h2>
<p>Your new key ${masked(r.last4)} (created ${when(r.createdAt)}) was sent to the e-mail address of your subscription. It is never shown here, so that a stolen session cannot take your key over.</p>
<p>${until} When the e-mail arrives, connect the new key below.</p>
</section>`;
}

export function keysPage(view: KeysView): string {
  const { connected, signedIn } = view;
  const parts: string[] = [];
  if (view.rotated) parts.push(rotatedNotice(view.rotated));
  if (!connected) {
    parts.push(
      connectForm(
        signedIn.csrf,
        view.accountTier === 'free'
          ? 'Your API key arrives by e-mail once you subscribe to a paid tier (<a href="/pricing">pricing</a>). Paste it here once to see its usage, rotate it and manage your collections from the console.'
          : 'Your API key came by e-mail when your subscription started. Paste it here once to see its usage, rotate it and manage your collections from the console.',
      ),
    );
  } else if (!connected.usage) {
    parts.push(
      `<section class="card" aria-labelledby="key"><h2 id="key">Your key</h2><p>The connected key ${masked(connected.last4)} no longer works (replaced, revoked or expired).</p></section>`,
      connectForm(signedIn.csrf, 'Paste the key from your latest key e-mail.'),
    );
  } else {
    const usage = connected.usage;
    const lastUsed = lastUsedDay(usage);
    parts.push(`<section class="card" aria-labelledby="key">
<h2 id="key">Your key</h2>
<dl class="facts">
<dt>Key</dt><dd data-last4="${h(connected.last4)}">${masked(connected.last4)}</dd>
<dt>Tier</dt><dd>${h(usage.tier)}</dd>
<dt>Created</dt><dd>${usage.key?.createdAt ? `${h(usage.key.createdAt.slice(0, 16).replace('T', ' '))} UTC` : 'not on record (the key a rotation replaced)'}</dd>
<dt>Expires</dt><dd>${usage.key?.expiresAt ? `${h(usage.key.expiresAt.slice(0, 16).replace('T', ' '))} UTC` : 'never'}</dd>
<dt>Last used</dt><dd>${lastUsed ? `${h(lastUsed)} (UTC day)` : 'not this month'}</dd>
<dt>Rate limit</dt><dd>${usage.requestsPerMinute !== undefined ? `${usage.requestsPerMinute} requests a minute` : '—'}</dd>
</dl>
<form method="post" action="/keys/disconnect">${csrfField(signedIn.csrf)}<button type="submit" class="secondary">Disconnect from the console</button></form>
</section>
<section class="card" aria-labelledby="rotate">
<h2 id="rotate">Rotate</h2>
<p>Rotating makes a new key and sends it to your subscription's e-mail address; the console never shows it. Rotate at once, stopping the old key, if it may have leaked: that is how a key is revoked here, since a subscription always keeps one working key.</p>
<form method="post" action="/keys/rotate" class="stack">
${csrfField(signedIn.csrf)}
<fieldset>
<legend>The old key</legend>
<div class="choice"><input type="radio" id="grace-keep" name="grace" value="keep" checked><label for="grace-keep">keeps working for ${Math.round(view.graceSeconds / 60)} minutes, while I change over</label></div>
<div class="choice"><input type="radio" id="grace-none" name="grace" value="none"><label for="grace-none">stops at once (it may have leaked)</label></div>
</fieldset>
<button type="submit">Rotate key</button>
</form>
</section>`);
  }
  return page({ title: 'API keys', path: '/keys', signedIn, ...(view.notice ? { notice: view.notice } : {}) }, parts.join('\n'));
}
