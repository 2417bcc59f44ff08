/**
 * What the console says when POST /team/invitations/accept refuses an invitation (pure): by the
 * answer's status and code, in the console's own words, so the page reads the same whatever the
 * service's message becomes.
 */
export function invitationRefusal(status: number, code: string | undefined, signedInAs: string): string {
  if (status === 400) return 'This is not a whole invitation link. Open the link in the e-mail again, or copy all of it.';
  if (status === 404)
    return `This invitation is for another address, or the link is wrong. You are logged in as ${signedInAs}: log in with the address the invitation was sent to.`;
  if (status === 410 && code === 'EXPIRED') return 'This invitation has expired; ask for a new one.';
  if (status === 410 && code === 'USED') return 'This invitation was already used or withdrawn; ask for a new one.';
  if (status === 410) return "This team's subscription is no longer on the team tier, so there is no workspace to join.";
  if (status === 409) return 'This invitation was used or withdrawn meanwhile, or the team is full; ask for a new one.';
  return 'The invitation could not be accepted. Try again in a moment.';
}

/** The notice after a change on the team page, by the `done` of its redirect: never text from the URL. */
export const TEAM_DONE: Record<string, string> = {
  invited: 'The invitation is on its way by e-mail. It shows under pending invitations until it is accepted.',
  withdrawn: 'The invitation is withdrawn: its link no longer works.',
  role: 'The role is changed.',
  removed: 'The member is removed: their key stops working within a second.',
  left: 'You left the team: your key for it stops working within a second.',
  joined: 'You joined the team. Your own API key for it is on its way by e-mail.',
  'proof-sent': 'The proof e-mail is on its way. Its link works once, for 24 hours, and only you (the owner) can confirm it.',
  'domain-proven': 'The domain is proven: addresses at it can now sign in through your single sign-on.',
};

/** What the console says when POST /team/sso/domain-proofs/confirm refuses a domain proof link (pure), by status and code. */
export function domainProofRefusal(status: number, code: string | undefined, signedInAs: string): string {
  if (status === 400) return 'This is not a whole proof link. Open the link in the e-mail again, or copy all of it.';
  if (status === 403)
    return `Only the team's owner can confirm this link, and you are logged in as ${signedInAs}. Pass the link on to the owner.`;
  if (status === 404)
    return `This link is not for a team you own, or it is wrong. You are logged in as ${signedInAs}: log in as the team's owner.`;
  if (status === 410 && code === 'EXPIRED') return 'This link has expired. The owner can send a new one from the team page.';
  if (status === 410) return 'This link was already used or replaced by a newer one.';
  if (status === 409) return 'Another team has proven this domain, or it is no longer in your single sign-on settings.';
  return 'The domain could not be proven. Try again in a moment.';
}
