import { expect } from 'chai';
import { Parts } from '../../../services/platform/parts.ts';

describe('Parts: what a service started (unit)', () => {
  it('stops newest first, and a part that fails to stop does not keep the others running', async () => {
    const parts = new Parts();
    const stopped: string[] = [];
    parts.add({ stop: async () => void stopped.push('consumer') });
    parts.onStop(() => {
      stopped.push('timer');
      throw new Error('boom');
    });
    parts.add({ stop: () => void stopped.push('server') });
    const errors: unknown[] = [];
    await parts.stopAll((err) => errors.push(err));
    expect(stopped).to.deep.equal(['server', 'timer', 'consumer']);
    expect(errors).to.have.length(1);
    await parts.stopAll();
    expect(stopped, 'each part is stopped once').to.have.length(3);
  });

  it('stops what a failed start had started, then lets the error go on', async () => {
    const parts = new Parts();
    const stopped: string[] = [];
    const failure = await parts
      .starting(async () => {
        parts.add({ stop: async () => void stopped.push('projection') });
        throw new Error('the feed could not start');
      })
      .catch((err: unknown) => err);
    expect(failure).to.be.instanceOf(Error).with.property('message', 'the feed could not start');
    expect(stopped).to.deep.equal(['projection']);
  });
});
