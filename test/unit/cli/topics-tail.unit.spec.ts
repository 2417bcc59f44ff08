import { expect } from 'chai';
import { parseFrom } from '../../../app/cli/topics-tail.ts';
import { UsageError } from '../../../app/cli/exit.ts';

describe('svc topics tail --from (unit)', () => {
  it('takes beginning, end (the default), an offset or an ISO time', () => {
    expect(parseFrom(undefined)).to.deep.equal({ kind: 'end' });
    expect(parseFrom('end')).to.deep.equal({ kind: 'end' });
    expect(parseFrom('beginning')).to.deep.equal({ kind: 'beginning' });
    expect(parseFrom('42')).to.deep.equal({ kind: 'offset', offset: 42n });
    expect(parseFrom('2026-11-28T01:00:00Z')).to.deep.equal({ kind: 'time', ms: Date.parse('2026-11-28T01:00:00Z') });
  });

  it('refuses anything else as a usage error', () => {
    for (const bad of ['yesterday', '-1', '1.5', '2026-13-45', '']) expect(() => parseFrom(bad), bad).to.throw(UsageError, /--from takes/);
  });
});
