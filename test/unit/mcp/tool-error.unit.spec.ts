import { expect } from 'chai';
import { TransientError } from '../../../events/errors.ts';
import { toolError } from '../../../services/mcp/tools/tool.ts';
import { createLogger } from '../../../services/platform/logger.ts';
import { ragError } from '../../../services/premium/caller.ts';

describe('MCP tool errors (unit)', () => {
  const logged: unknown[] = [];
  const log = createLogger('silent');
  const ctx = {
    log: Object.assign(Object.create(log) as typeof log, { error: (o: unknown) => logged.push(o), warn: (o: unknown) => logged.push(o) }),
    correlationId: 'req-1',
  };
  const textOf = (r: ReturnType<typeof toolError>) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

  it('answers a refusal of the application code with its message, code and details, as the HTTP face does', () => {
    const result = toolError(ragError(403, 'USAGE_EXCEEDED', 'monthly quota used up', { upgrade: 'https://x/pricing' }), ctx, 'rag_query');
    expect(result.isError).to.equal(true);
    expect(textOf(result)).to.equal('monthly quota used up (USAGE_EXCEEDED)');
    expect(result.structuredContent).to.deep.equal({
      error: 'monthly quota used up',
      code: 'USAGE_EXCEEDED',
      upgrade: 'https://x/pricing',
    });
  });

  it('answers an outage as retryable, without its inner message', () => {
    const result = toolError(new TransientError('broker kafka-1:9092 refused the connection'), ctx, 'rag_query');
    expect(result.structuredContent).to.deep.include({ code: 'UNAVAILABLE', retryAfterSeconds: 5 });
    expect(textOf(result)).to.not.include('kafka-1');
  });

  it('logs anything unexpected and answers with the request id only', () => {
    logged.length = 0;
    const result = toolError(new Error('secret detail: /var/lib/svc/rag/abc.sqlite'), ctx, 'rag_index');
    expect(result.structuredContent).to.deep.equal({ error: 'internal error; request id req-1', code: 'INTERNAL', requestId: 'req-1' });
    expect(JSON.stringify(result)).to.not.include('secret detail');
    expect(logged).to.have.length(1);
  });
});
