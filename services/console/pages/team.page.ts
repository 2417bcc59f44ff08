import type { TeamAnswer, TeamsAnswer } from '../../teams/team-answers.ts';
import { csrfField, field, h, page, when, type Frame } from './layout.ts';

/**
 * The team workspace page (pure): the workspaces of GET /teams, and for one of them GET /team's
 * owner, members and (for its owner and admins) pending invitations. Each form is offered only as
 * the API allows it: the owner and admins invite and withdraw, admins remove members, the owner
 * removes anyone and changes roles; a member or admin may leave. The keys service decides anyway.
 */

export interface TeamView {
  signedIn: NonNullable<Frame['signedIn']>;
  /** The signed-in account's id: their own row offers leaving, not removing. */
  userId: string;
  workspaces: TeamsAnswer['workspaces'];
  /** The workspace shown; null when there is none, or several and none chosen. */
  team: TeamAnswer | null;
  /** The invite form's input, kept when it was refused. */
  invite?: { email: string; role: string };
  notice?: Frame['notice'];
}

const ROLE_NAMES = { owner: 'owner', admin: 'admin', member: 'member' } as const;
const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${h(value)}">`;
/** Words only screen readers hear, so that every "Remove" button names whom it removes. */
const forWhom = (text: string) => `<span class="visually-hidden"> ${h(text)}</span>`;

function workspaceList(view: TeamView): string {
  if (view.workspaces.length < 2) return '';
  const current = view.team?.subscriptionId;
  const items = view.workspaces
    .map(
      (w) =>
        `<li><a href="/team?${new URLSearchParams({ subscriptionId: w.subscriptionId })}"${w.subscriptionId === current ? ' aria-current="true"' : ''}>Workspace <code>${h(w.subscriptionId)}</code></a> (you are its ${ROLE_NAMES[w.role]})</li>`,
    )
    .join('');
  return `<nav aria-labelledby="workspaces"><h2 id="workspaces">Your workspaces</h2><ul>${items}</ul></nav>`;
}

function memberRows(view: TeamView, team: TeamAnswer): string {
  const { csrf } = view.signedIn;
  const scope = hidden('subscriptionId', team.subscriptionId);
  return team.members
    .map((m) => {
      const self = m.userId === view.userId;
      const actions: string[] = [];
      if (team.role === 'owner') {
        const to = m.role === 'admin' ? 'member' : 'admin';
        actions.push(
          `<form class="inline" method="post" action="/team/members/role">${csrfField(csrf)}${scope}${hidden('userId', m.userId)}${hidden('role', to)}<button type="submit" class="secondary">Make ${to}${forWhom(m.email)}</button></form>`,
        );
      }
      const mayRemove = !self && (team.role === 'owner' || (team.role === 'admin' && m.role === 'member'));
      if (mayRemove)
        actions.push(
          `<form class="inline" method="post" action="/team/members/remove">${csrfField(csrf)}${scope}${hidden('userId', m.userId)}<button type="submit" class="secondary">Remove${forWhom(m.email)}</button></form>`,
        );
      const key = m.key
        ? `<code class="key" aria-label="key ending in ${h(m.key.last4.split('').join(' '))}">svc_…${h(m.key.last4)}</code>`
        : 'on its way by e-mail';
      return `<tr data-member="${h(m.email)}" data-role="${h(m.role)}">
<th scope="row">${h(m.email)}${self ? ' (you)' : ''}</th><td>${h(m.role)}</td><td>${h(when(m.joinedAt))}</td><td>${m.via === 'sso' ? 'single sign-on' : 'invitation'}</td><td>${key}</td><td>${actions.join(' ')}</td>
</tr>`;
    })
    .join('');
}

function membersSection(view: TeamView, team: TeamAnswer): string {
  const table =
    team.members.length === 0
      ? '<p>No members yet.</p>'
      : `<div class="scroll" role="region" aria-label="Members table, scrolls sideways" tabindex="0"><table>
<thead><tr><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Joined</th><th scope="col">Joined by</th><th scope="col">Their key</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${memberRows(view, team)}</tbody></table></div>`;
  return `<section aria-labelledby="members"><h2 id="members">Members</h2>${table}</section>`;
}

function invitationsSection(view: TeamView, team: TeamAnswer): string {
  const { csrf } = view.signedIn;
  const rows = team.invitations
    .map(
      (i) => `<tr data-invitation="${h(i.email)}">
<th scope="row">${h(i.email)}</th><td>${h(i.role)}</td><td>${h(when(i.invitedAt))}</td><td>${h(when(i.expiresAt))}</td>
<td><form class="inline" method="post" action="/team/invitations/withdraw">${csrfField(csrf)}${hidden('subscriptionId', team.subscriptionId)}${hidden('invitationId', i.invitationId)}<button type="submit" class="secondary">Withdraw${forWhom(`the invitation of ${i.email}`)}</button></form></td>
</tr>`,
    )
    .join('');
  const table =
    team.invitations.length === 0
      ? '<p>None pending.</p>'
      : `<div class="scroll" role="region" aria-label="Pending invitations table, scrolls sideways" tabindex="0"><table>
<thead><tr><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Invited</th><th scope="col">Link works until</th><th scope="col"><span class="visually-hidden">Withdraw</span></th></tr></thead>
<tbody>${rows}</tbody></table></div>`;
  return `<section aria-labelledby="invitations"><h2 id="invitations">Pending invitations</h2>${table}</section>`;
}

function inviteForm(view: TeamView, team: TeamAnswer): string {
  const chosen = view.invite?.role === 'admin' ? 'admin' : 'member';
  const role =
    team.role === 'owner'
      ? `<div class="field"><label for="f-role">Role</label><select id="f-role" name="role" aria-describedby="f-role-hint">
<option value="member"${chosen === 'member' ? ' selected' : ''}>member</option><option value="admin"${chosen === 'admin' ? ' selected' : ''}>admin</option>
</select><span class="hint" id="f-role-hint">Admins invite and remove members; only you change roles.</span></div>`
      : `${hidden('role', 'member')}<p class="hint">You invite members; the owner can make them admins.</p>`;
  return `<section class="card" aria-labelledby="invite"><h2 id="invite">Invite someone</h2>
<p>The invitation goes by e-mail with a link that works for a limited time. Whoever accepts it with an account of that address gets an API key of their own under this team's subscription, sharing its quota.</p>
<form method="post" action="/team/invite" class="stack">
${csrfField(view.signedIn.csrf)}
${hidden('subscriptionId', team.subscriptionId)}
${field({ name: 'email', label: 'E-mail', type: 'email', autocomplete: 'off', required: true, maxlength: 254, ...(view.invite ? { value: view.invite.email } : {}) })}
${role}
<button type="submit">Send invitation</button>
</form></section>`;
}

/**
 * The single sign-on domains, pending or proven (owner and admins); the owner sends (or sends again) a
 * pending domain's proof e-mail to an address at it. Never the link itself: it is only in that e-mail.
 */
function ssoDomainsSection(view: TeamView, team: TeamAnswer): string {
  if (team.ssoDomains.length === 0) return '';
  const rows = team.ssoDomains
    .map((d) => {
      const state =
        d.status === 'proven'
          ? 'proven'
          : d.proofSentTo
            ? `pending: link sent to ${h(d.proofSentTo)}, works until ${h(when(d.proofExpiresAt))}`
            : 'pending: not proven yet';
      const send =
        team.role === 'owner' && d.status === 'pending'
          ? `<form class="inline" method="post" action="/team/sso/domain-proofs">${csrfField(view.signedIn.csrf)}${hidden('subscriptionId', team.subscriptionId)}${hidden('domain', d.domain)}<label class="visually-hidden" for="proof-${h(d.domain)}">Address at ${h(d.domain)}</label><input id="proof-${h(d.domain)}" name="address" type="email" autocomplete="off" required maxlength="254" placeholder="it@${h(d.domain)}"> <button type="submit" class="secondary">Send proof e-mail${forWhom(d.domain)}</button></form>`
          : '';
      return `<tr data-sso-domain="${h(d.domain)}" data-status="${d.status}"><th scope="row">${h(d.domain)}</th><td>${state}</td><td>${send}</td></tr>`;
    })
    .join('');
  return `<section aria-labelledby="sso-domains"><h2 id="sso-domains">Single sign-on domains</h2>
<p>A domain signs in through your identity provider only once it is proven: its proof e-mail goes to an address at the domain, and the team's owner confirms the link in it (it works once, for 24 hours).</p>
<div class="scroll" role="region" aria-label="Single sign-on domains table, scrolls sideways" tabindex="0"><table>
<thead><tr><th scope="col">Domain</th><th scope="col">Status</th><th scope="col">Proof</th></tr></thead><tbody>${rows}</tbody></table></div></section>`;
}

function leaveForm(view: TeamView, team: TeamAnswer): string {
  return `<section class="card" aria-labelledby="leave"><h2 id="leave">Leave this team</h2>
<p>Your own key for this team stops working within a second. To come back, you need a new invitation.</p>
<form method="post" action="/team/leave">${csrfField(view.signedIn.csrf)}${hidden('subscriptionId', team.subscriptionId)}<button type="submit" class="secondary">Leave this team</button></form>
</section>`;
}

export function teamPage(view: TeamView): string {
  const frame = { title: 'Team', path: '/team', signedIn: view.signedIn, ...(view.notice ? { notice: view.notice } : {}) };
  if (view.workspaces.length === 0 && !view.team)
    return page(
      frame,
      '<p data-team="none">You are in no team workspace. A workspace comes with the team tier: its owner invites members by e-mail, and each member gets a key of their own under the team\'s subscription. <a href="/pricing">See the tiers</a>.</p>',
    );
  const team = view.team;
  if (!team) return page(frame, `${workspaceList(view)}<p>Choose a workspace.</p>`);
  const managing = team.role !== 'member';
  const facts = `<section class="card" aria-labelledby="workspace"><h2 id="workspace">Workspace</h2>
<dl class="facts">
<dt>Subscription</dt><dd><code>${h(team.subscriptionId)}</code></dd>
<dt>Owner</dt><dd data-owner>${h(team.owner.email ?? '—')}</dd>
<dt>Your role</dt><dd data-my-role="${team.role}">${ROLE_NAMES[team.role]}</dd>
<dt>Members</dt><dd>${team.members.length} of at most ${team.limits.members}</dd>
</dl></section>`;
  return page(
    frame,
    [
      workspaceList(view),
      facts,
      membersSection(view, team),
      managing ? invitationsSection(view, team) : '',
      managing ? inviteForm(view, team) : '',
      managing ? ssoDomainsSection(view, team) : '',
      team.role === 'owner' ? '' : leaveForm(view, team),
    ]
      .filter(Boolean)
      .join('\n'),
  );
}
