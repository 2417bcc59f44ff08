import { expect } from 'chai';
import { loginPage, signupPage } from '../../../services/console/pages/auth.page.ts';
import { teamPage, type TeamView } from '../../../services/console/pages/team.page.ts';
import { joinSignedOutPage } from '../../../services/console/pages/team-join.page.ts';
import { invitationRefusal } from '../../../services/console/team-refusals.ts';
import type { TeamAnswer } from '../../../services/teams/team-answers.ts';

const TOKEN = 'A'.repeat(43);
const member = (userId: string, role: 'admin' | 'member', email = `${userId}@example.test`) => ({
  userId,
  email,
  role,
  via: 'invitation' as const,
  joinedAt: '2026-11-20T10:00:00.000Z',
  key: { last4: 'wxyz', createdAt: '2026-11-20T10:00:00.000Z' },
});
const team = (role: TeamAnswer['role']): TeamAnswer => ({
  subscriptionId: 'sub-1',
  role,
  owner: { userId: 'o', email: 'owner@example.test' },
  members: [member('adm', 'admin'), member('mem', 'member'), member('me', 'member')],
  invitations:
    role === 'member'
      ? []
      : [
          {
            invitationId: 'inv-1',
            email: 'guest@example.test',
            role: 'member',
            invitedAt: '2026-11-20T10:00:00.000Z',
            expiresAt: '2026-11-27T10:00:00.000Z',
          },
        ],
  ssoDomains: [],
  limits: { members: 100 },
});
const view = (t: TeamAnswer, userId = 'me'): TeamView => ({
  signedIn: { name: 'Me', csrf: 'csrf-token' },
  userId,
  workspaces: [{ subscriptionId: t.subscriptionId, role: t.role }],
  team: t,
});
const buttons = (html: string) =>
  [...html.matchAll(/<button type="submit"[^>]*>(.*?)<\/button>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, ''));

describe('console: the team pages (unit)', () => {
  it('offers the owner role changes and removal of anyone, admin in the role select, and no leaving', () => {
    const html = teamPage(view(team('owner'), 'o'));
    const b = buttons(html);
    expect(b).to.include.members([
      'Make member adm@example.test',
      'Make admin mem@example.test',
      'Remove adm@example.test',
      'Remove mem@example.test',
      'Withdraw the invitation of guest@example.test',
      'Send invitation',
    ]);
    expect(b).not.to.include('Leave this team');
    expect(html).to.include('<option value="admin"');
  });

  it('lets an admin remove members but not admins, invite members only, change no role, and leave', () => {
    const html = teamPage(view(team('admin'), 'adm'));
    const b = buttons(html);
    expect(b).to.include.members(['Remove mem@example.test', 'Remove me@example.test', 'Send invitation', 'Leave this team']);
    expect(b.filter((x) => x.startsWith('Make '))).to.deep.equal([]);
    expect(b).not.to.include('Remove adm@example.test');
    expect(html).not.to.include('<option value="admin"');
    expect(html).to.include('<input type="hidden" name="role" value="member">');
  });

  it('shows a member the team and only a leave button; every form carries the CSRF token', () => {
    const html = teamPage(view(team('member')));
    expect(buttons(html).filter((x) => !x.startsWith('Log out'))).to.deep.equal(['Leave this team']);
    expect(html).not.to.include('Pending invitations');
    expect(html).to.include('me@example.test (you)');
    const forms = html.match(/<form [^>]*method="post"/g) ?? [];
    expect((html.match(/name="csrf" value="csrf-token"/g) ?? []).length).to.equal(forms.length);
  });

  it('lists several workspaces with a link each, marking the one shown; none: says what has one', () => {
    const t = team('member');
    const html = teamPage({ ...view(t), workspaces: [{ subscriptionId: 'sub-0', role: 'owner' }, ...view(t).workspaces] });
    expect(html).to.include('<a href="/team?subscriptionId=sub-0">');
    expect(html).to.include('<a href="/team?subscriptionId=sub-1" aria-current="true">');
    const chooser = teamPage({ ...view(t), team: null, workspaces: [{ subscriptionId: 'sub-0', role: 'owner' }, ...view(t).workspaces] });
    expect(chooser).to.include('Choose a workspace.');
    expect(teamPage({ ...view(t), team: null, workspaces: [] })).to.include('data-team="none"');
  });

  it('escapes what it shows: an address cannot put markup on the page', () => {
    const t = team('owner');
    t.members = [member('x', 'member', '"><script>alert(1)</script>@example.test')];
    const html = teamPage(view(t, 'o'));
    expect(html).not.to.include('<script>');
    expect(html).to.include('&lt;script&gt;');
  });

  it('carries the join page in the log-in and sign-up forms, never in a link to another page', () => {
    for (const newAccount of [false, true]) {
      const html = joinSignedOutPage({ token: TOKEN, csrf: 'c', newAccount });
      expect(html).to.include(`<input type="hidden" name="next" value="/team/join?token=${TOKEN}">`);
      for (const [, href] of html.matchAll(/href="([^"]*)"/g))
        if (href!.includes(TOKEN)) expect(href!.startsWith('/team/join?'), href).to.equal(true);
    }
    const next = `/team/join?token=${TOKEN}`;
    for (const html of [loginPage({ csrf: 'c', next }), signupPage({ csrf: 'c', next })]) {
      expect(html).to.include('name="next"');
      for (const [, href] of html.matchAll(/href="([^"]*)"/g)) expect(href).not.to.include(TOKEN);
    }
    expect(loginPage({ csrf: 'c', next: '/team' })).to.include('href="/signup?next=%2Fteam"');
  });

  it("says each refusal of an invitation in the console's words", () => {
    expect(invitationRefusal(410, 'EXPIRED', 'a@x')).to.equal('This invitation has expired; ask for a new one.');
    expect(invitationRefusal(410, 'USED', 'a@x')).to.match(/already used or withdrawn/);
    expect(invitationRefusal(410, 'GONE', 'a@x')).to.match(/no longer on the team tier/);
    expect(invitationRefusal(404, 'NOT_FOUND', 'a@x')).to.match(/^This invitation is for another address.*logged in as a@x/);
    expect(invitationRefusal(409, 'CONFLICT', 'a@x')).to.match(/team is full/);
    expect(invitationRefusal(400, undefined, '')).to.match(/not a whole invitation link/);
  });
});
