import { expect } from 'chai';
import { MongoNetworkError, MongoServerError, MongoWriteConcernError } from 'mongodb';
import { PermanentError, PoisonMessageError, TransientError, isPermanent, isTransient } from '../../../events/errors.ts';
import { EffectBusy } from '../../../events/effects.ts';
import { WriteConflict } from '../../../events/projection.ts';

const serverError = (code: number, codeName: string, labels: string[] = []) => {
  const err = new MongoServerError({ ok: 0, code, codeName, errmsg: `${codeName} (test)` });
  for (const label of labels) err.addErrorLabel(label);
  return err;
};

describe('error classification (unit)', () => {
  it('treats every TransientError, subclasses included, as an outage to wait out', () => {
    expect(isTransient(new TransientError('x'))).to.equal(true);
    expect(isTransient(new WriteConflict('a document changed underneath'))).to.equal(true);
    expect(isTransient(new EffectBusy('welcome-email:u1', new Date()))).to.equal(true);
    expect(isTransient(new Error('wrapped', { cause: new WriteConflict('inner') }))).to.equal(true);
  });

  it("treats handler and poison errors as the message's fault", () => {
    expect(isTransient(new Error('handler refuses this event'))).to.equal(false);
    expect(isTransient(new PoisonMessageError('bad bytes'))).to.equal(false);
  });

  it('treats MongoDB answers that mean "not now" as transient: not primary, shutting down, write concern, time limits', () => {
    for (const [code, name] of [
      [91, 'ShutdownInProgress'],
      [189, 'PrimarySteppedDown'],
      [10107, 'NotWritablePrimary'],
      [13435, 'NotPrimaryNoSecondaryOk'],
      [11600, 'InterruptedAtShutdown'],
      [11602, 'InterruptedDueToReplStateChange'],
      [64, 'WriteConcernFailed'],
      [262, 'ExceededTimeLimit'],
      [112, 'WriteConflict'],
    ] as const) {
      expect(isTransient(serverError(code, name)), name).to.equal(true);
    }
    expect(
      isTransient(new MongoWriteConcernError({ ok: 1, writeConcernError: { code: 100, errmsg: 'waiting for replication timed out' } })),
    ).to.equal(true);
    expect(isTransient(serverError(2, 'BadValue', ['RetryableWriteError']))).to.equal(true);
    expect(isTransient(new MongoNetworkError('connection reset'))).to.equal(true);
  });

  it('keeps MongoDB answers about the request itself non-transient: bad value, duplicate key, unauthorized', () => {
    expect(isTransient(serverError(2, 'BadValue'))).to.equal(false);
    expect(isTransient(serverError(11000, 'DuplicateKey'))).to.equal(false);
    expect(isTransient(serverError(13, 'Unauthorized'))).to.equal(false);
  });

  it('treats socket failures of any client as transient', () => {
    expect(isTransient(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).to.equal(true);
    expect(isTransient(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))).to.equal(true);
  });

  it('recognises a permanent failure through its causes, and never calls it transient', () => {
    const permanent = new PermanentError('refused for good', { cause: new TransientError('inner outage') });
    expect(isPermanent(permanent)).to.equal(true);
    expect(isTransient(permanent)).to.equal(false);
    expect(isPermanent(new Error('wrapped', { cause: new PoisonMessageError('bad') }))).to.equal(true);
    expect(isPermanent(new TransientError('outage'))).to.equal(false);
  });
});
