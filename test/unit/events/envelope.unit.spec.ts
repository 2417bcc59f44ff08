import { expect } from 'chai';
import { derivedEventId } from '../../../events/envelope.ts';

describe('event envelope (unit)', () => {
  it('derives the same UUID from the same seed, a different one from another', () => {
    const a = derivedEventId('webhook-1:0');
    expect(a).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(derivedEventId('webhook-1:0')).to.equal(a);
    expect(derivedEventId('webhook-1:1')).not.to.equal(a);
  });
});
