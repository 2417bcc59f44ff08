import { expect } from 'chai';
import { ConsumerRunner } from '../../../events/consumer.ts';
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

  it('stops consumer runners registered one after another together, and waits for them all before the part before them', async () => {
    const parts = new Parts();
    const events: string[] = [];
    const opened: Record<string, () => void> = {};
    // Runners without Kafka (no constructor run): only their stop is called.
    const runner = (name: string): ConsumerRunner =>
      Object.assign(Object.create(ConsumerRunner.prototype) as ConsumerRunner, {
        stop: () => {
          events.push(`${name} stopping`);
          return new Promise<void>((resolve) => (opened[name] = resolve)).then(() => void events.push(`${name} stopped`));
        },
      });
    parts.onStop(() => void events.push('publisher stopped'));
    parts.add(runner('projection'));
    parts.add(runner('issuer'));
    parts.add({ stop: () => void events.push('server stopped') });
    const stopping = parts.stopAll();
    await new Promise((resolve) => setImmediate(resolve));
    expect(events, 'both runners stop at once, after the server').to.deep.equal([
      'server stopped',
      'issuer stopping',
      'projection stopping',
    ]);
    opened.issuer!();
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).to.not.include('publisher stopped');
    opened.projection!();
    await stopping;
    expect(events.slice(-2)).to.deep.equal(['projection stopped', 'publisher stopped']);
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
