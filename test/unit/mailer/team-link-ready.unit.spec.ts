import { expect } from 'chai';
import type { Document } from 'mongodb';
import type { StoredDocument } from '../../../events/projection.ts';
import { NotProjectedYet, waitUntilApplied } from '../../../services/mailer/key-ready.ts';
import { teamLinkApplied } from '../../../services/mailer/team-link-ready.ts';

const position = (offset: string) => ({ topic: 'teams.events', partition: 1, offset });
const invited = (invitationId: string, offset: string) =>
  ({ type: 'team.member-invited', data: { subscriptionId: 'sub-1', invitationId }, position: position(offset) }) as never;
const proofAsked = (tokenHash: string, offset: string) =>
  ({ type: 'team.sso-domain-proof-requested', data: { subscriptionId: 'sub-1', tokenHash }, position: position(offset) }) as never;

const workspace = (fields: Record<string, unknown>, offset?: string): StoredDocument<Document> =>
  ({
    _id: 'sub-1',
    _v: 1,
    _pos: offset === undefined ? [] : [{ ...position(offset), recent: [] }],
    members: [],
    invitations: [],
    sso: null,
    ...fields,
  }) as StoredDocument<Document>;

describe('mailer: an invitation or domain-proof link is mailed only once the workspaces projection answers it (unit)', () => {
  it('is not ready without the workspace, or with one that has neither the invitation nor the position', () => {
    expect(teamLinkApplied(null, invited('inv-1', '7'))).to.equal(false);
    expect(teamLinkApplied(workspace({ invitations: [{ invitationId: 'inv-0' }] }, '6'), invited('inv-1', '7'))).to.equal(false);
    expect(teamLinkApplied(workspace({ sso: { proofs: [{ tokenHash: 'other' }] } }, '6'), proofAsked('t1', '7'))).to.equal(false);
  });

  it('is ready when the workspace holds the invitation or the proof', () => {
    expect(teamLinkApplied(workspace({ invitations: [{ invitationId: 'inv-1' }] }), invited('inv-1', '7'))).to.equal(true);
    expect(teamLinkApplied(workspace({ sso: { proofs: [{ tokenHash: 't1' }] } }), proofAsked('t1', '7'))).to.equal(true);
  });

  it("is ready when the event's position is applied (the invitation since settled and trimmed), compared as numbers", () => {
    expect(teamLinkApplied(workspace({}, '10'), invited('inv-1', '9'))).to.equal(true);
    expect(teamLinkApplied(workspace({}, '9'), invited('inv-1', '10'))).to.equal(false);
  });

  it('a removed workspace holding the invitation is not ready on that alone', () => {
    expect(teamLinkApplied(workspace({ _deleted: true, invitations: [{ invitationId: 'inv-1' }] }), invited('inv-1', '7'))).to.equal(false);
  });

  it('waits until the projection holds it, and gives up with a retryable error', async () => {
    let loads = 0;
    await waitUntilApplied(
      async () => (++loads >= 3 ? workspace({ invitations: [{ invitationId: 'inv-1' }] }) : workspace({})),
      (stored) => teamLinkApplied(stored, invited('inv-1', '7')),
      (waited) => new NotProjectedYet('the invitation', waited),
      { sleep: async () => undefined },
    );
    expect(loads).to.equal(3);
    const error = await waitUntilApplied(
      async () => null,
      () => false,
      (waited) => new NotProjectedYet('the invitation', waited),
      { maxWaitMs: 0, sleep: async () => undefined },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(NotProjectedYet);
  });
});
