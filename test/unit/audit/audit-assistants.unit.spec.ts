import { expect } from 'chai';
import { newEvent } from '../../../events/envelope.ts';
import { AUDITED_TYPES, auditEntryOf, type AuditedEvent } from '../../../services/audit/audit-entry.ts';

const at = new Date('2026-11-28T01:40:00.000Z');
const USER = '3f0c1e6a-2b7d-4a3e-9b8c-1d2e3f4a5b6c';
const event = <E extends AuditedEvent>(type: E['type'], data: E['data']): E => {
  const made = newEvent(type, data as never, { correlationId: 'c' });
  return { ...made, metadata: { ...made.metadata, occurredAt: at } } as unknown as E;
};

/** An assistant's OAuth grant in the audit log (issue 40): the account's own entries, the key by its last four only. */
describe('audit log: connected assistants (unit)', () => {
  it('files a connection under the account, naming the client, its scopes and the key by its last four', () => {
    expect(AUDITED_TYPES).to.include('account.assistant-connected').and.include('account.assistant-disconnected');
    const entry = auditEntryOf(
      event('account.assistant-connected', {
        userId: USER,
        grantId: 'grant-1',
        clientId: 'client-1',
        clientName: 'Claude Code',
        scopes: ['mcp'],
        tier: 'pro',
        keyLast4: 'Wxyz',
      }),
    );
    expect(entry).to.deep.include({
      action: 'account.assistant-connected',
      actor: `account:${USER}`,
      userId: USER,
      target: 'assistant Claude Code',
      subscriptionId: null,
      at,
    });
    expect(entry.details).to.deep.equal({ client: 'client-1', scopes: 'mcp', tier: 'pro', key: '…Wxyz' });
  });

  it('says who ended a grant: the customer in the console, or svc (a reused refresh token, a client’s revocation)', () => {
    const ended = (by: 'customer' | 'provider') =>
      auditEntryOf(event('account.assistant-disconnected', { userId: USER, grantId: 'g', clientId: 'c', clientName: 'Cursor', by }));
    expect(ended('customer')).to.deep.include({ actor: `account:${USER}`, target: 'assistant Cursor', userId: USER });
    expect(ended('provider')).to.deep.include({ actor: 'svc', userId: USER });
    expect(ended('provider').details).to.deep.equal({ client: 'c', by: 'provider' });
  });
});
