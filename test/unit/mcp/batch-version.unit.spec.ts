import { expect } from 'chai';
import { BATCHES_REMOVED_IN, batchRefusedFor } from '../../../services/mcp/http/mcp.routes.ts';

/** Which declared protocol versions may not batch (MCP removed JSON-RPC batches in 2025-06-18). */
describe('MCP batches per protocol version (unit)', () => {
  it('refuses batches for 2025-06-18 and every later revision', () => {
    expect(BATCHES_REMOVED_IN).to.equal('2025-06-18');
    for (const v of ['2025-06-18', '2025-11-25', '2026-07-28']) expect(batchRefusedFor(v)).to.equal(v);
  });

  it('lets 2025-03-26 and earlier batch, and a request without the header (taken as 2025-03-26)', () => {
    for (const v of ['2025-03-26', '2024-11-05', undefined, '']) expect(batchRefusedFor(v)).to.equal(null);
  });

  it('leaves a header that is no date to the SDK, which refuses unsupported versions itself', () => {
    for (const v of ['latest', '2025-06-18x', '9999']) expect(batchRefusedFor(v)).to.equal(null);
  });
});
