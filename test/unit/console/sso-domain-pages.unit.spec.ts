import { expect } from 'chai';
import { verifyRefusedPage, verifySignedInPage, verifySignedOutPage } from '../../../services/console/pages/sso-verify.page.ts';
import { teamPage } from '../../../services/console/pages/team.page.ts';
import { domainProofRefusal } from '../../../services/console/team-refusals.ts';
import type { TeamAnswer } from '../../../services/teams/team-answers.ts';

const TOKEN = 'B'.repeat(43);
const team = (role: TeamAnswer['role']): TeamAnswer => ({
  subscriptionId: 'sub-1',
  role,
  owner: { userId: 'o', email: 'owner@example.test' },
  members: [],
  invitations: [],
  ssoDomains:
    role === 'member'
      ? []
      : [
          { domain: 'example-corp.test', status: 'proven', proofSentTo: null, proofExpiresAt: null },
          { domain: 'b-corp.test', status: 'pending', proofSentTo: 'it@b-corp.test', proofExpiresAt: '2026-11-28T12:00:00.000Z' },
        ],
  limits: { members: 100 },
});
const signedIn = { name: 'Me', csrf: 'csrf-token' };
const render = (role: TeamAnswer['role']) =>
  teamPage({ signedIn, userId: 'o', workspaces: [{ subscriptionId: 'sub-1', role }], team: team(role) });

describe('console: single sign-on domain proofs (unit)', () => {
  it('shows the owner each domain pending or proven, and a proof e-mail form for the pending one only', () => {
    const html = render('owner');
    expect(html).to.match(/data-sso-domain="example-corp.test" data-status="proven"/);
    expect(html).to.match(/data-sso-domain="b-corp.test" data-status="pending"/);
    expect(html).to.include('link sent to it@b-corp.test');
    const forms = [...html.matchAll(/action="\/team\/sso\/domain-proofs"/g)];
    expect(forms).to.have.length(1);
    expect(html).to.include('<input type="hidden" name="domain" value="b-corp.test">');
  });

  it('shows an admin the statuses without the form, and a member nothing of them', () => {
    const admin = render('admin');
    expect(admin).to.include('Single sign-on domains');
    expect(admin).not.to.include('action="/team/sso/domain-proofs"');
    expect(render('member')).not.to.include('Single sign-on domains');
  });

  it('confirms nothing on opening: the signed-in page is a POST form with the token, the signed-out one logs in and comes back', () => {
    const inPage = verifySignedInPage({ signedIn, email: 'owner@example.test', token: TOKEN });
    expect(inPage).to.include('<form method="post" action="/team/sso/verify"');
    expect(inPage).to.include(`<input type="hidden" name="token" value="${TOKEN}">`);
    expect(inPage).to.include('name="csrf" value="csrf-token"');
    const outPage = verifySignedOutPage({ token: TOKEN, csrf: 'pre' });
    expect(outPage).to.include('action="/login"');
    expect(outPage).to.include(`<input type="hidden" name="next" value="/team/sso/verify?token=${TOKEN}">`);
    // The token goes into no link to another page.
    expect([...outPage.matchAll(/href="([^"]*)"/g)].map((m) => m[1]).filter((href) => href?.includes(TOKEN))).to.deep.equal([]);
    expect(verifyRefusedPage({ text: '<b>x</b>' })).to.include('&lt;b&gt;x&lt;/b&gt;');
  });

  it("says each refusal in the console's words, telling a non-owner to pass the link on", () => {
    expect(domainProofRefusal(403, 'FORBIDDEN', 'admin@example.test')).to.include('Pass the link on to the owner');
    expect(domainProofRefusal(404, 'NOT_FOUND', 'x@example.test')).to.include('log in as the team');
    expect(domainProofRefusal(410, 'EXPIRED', '')).to.include('expired');
    expect(domainProofRefusal(410, 'USED', '')).to.include('already used');
    expect(domainProofRefusal(409, 'CONFLICT', '')).to.include('Another team');
    expect(domainProofRefusal(400, undefined, '')).to.include('not a whole proof link');
  });
});
