import { expect } from 'chai';
import { PoisonMessageError, TransientError, isTransient } from '../../../events/errors.ts';
import { WriteConflict } from '../../../events/projection.ts';

describe('error classification (unit)', () => {
  it('treats every TransientError, subclasses included, as an outage to wait out', () => {
    expect(isTransient(new TransientError('x'))).to.equal(true);
    expect(isTransient(new WriteConflict('a document changed underneath'))).to.equal(true);
    expect(isTransient(new Error('wrapped', { cause: new WriteConflict('inner') }))).to.equal(true);
  });

  it('treats handler and poison errors as the message\'s fault', () => {
    expect(isTransient(new Error('handler refuses this event'))).to.equal(false);
    expect(isTransient(new PoisonMessageError('bad bytes'))).to.equal(false);
  });
});
