import { expect } from 'chai';
import { chooseStack, type EngineProbe, stackMode } from '../../support/stack-choice.ts';

describe('the test run’s stack choice (SVC_STACK)', () => {
  const noEngine: EngineProbe = async () => ({ found: false, reason: 'Could not find a working container runtime strategy' });
  const engine: EngineProbe = async () => ({ found: true, engine: 'Ubuntu 28.2.2 at localhost' });
  const unreachable: EngineProbe = async () => {
    throw new Error('the engine is looked for only when containers are asked for');
  };

  it('is the local stack when unset, empty or local', () => {
    expect(stackMode({})).to.equal('local');
    expect(stackMode({ SVC_STACK: '' })).to.equal('local');
    expect(stackMode({ SVC_STACK: 'local' })).to.equal('local');
    expect(stackMode({ SVC_STACK: 'containers' })).to.equal('containers');
  });

  it('refuses an unknown value, naming it and the known ones', () => {
    expect(() => stackMode({ SVC_STACK: 'docker' })).to.throw(
      'SVC_STACK must be local or containers (or unset, which is local), not "docker"',
    );
    expect(() => stackMode({ SVC_STACK: 'Containers' })).to.throw(/not "Containers"/);
  });

  it('does not look for an engine unless containers are asked for, and says local and why', async () => {
    expect(await chooseStack({}, unreachable)).to.deep.equal({
      use: 'local',
      line: 'stack: local, started on free ports (SVC_STACK unset)',
    });
    const named = await chooseStack({ SVC_STACK: 'local', KAFKA_BROKERS: 'k:9092', MONGODB_URI: 'mongodb://m/' }, unreachable);
    expect(named.line).to.equal('stack: local, the servers KAFKA_BROKERS, MONGODB_URI name (SVC_STACK = local)');
  });

  it('falls back to the local stack in one line when there is no engine', async () => {
    const choice = await chooseStack({ SVC_STACK: 'containers' }, noEngine);
    expect(choice.use).to.equal('local');
    expect(choice.line).to.equal(
      'stack: local, started on free ports (SVC_STACK=containers, but no container engine: Could not find a working container runtime strategy)',
    );
    expect(choice.line).not.to.include('\n');
  });

  it('uses the containers with an engine, saying which engine and which variables it ignores', async () => {
    const choice = await chooseStack({ SVC_STACK: 'containers', SMTP_URL: 'smtp://x' }, engine);
    expect(choice).to.deep.equal({
      use: 'containers',
      line: 'stack: containers, mongo and apache/kafka images (SVC_STACK=containers, Ubuntu 28.2.2 at localhost; SMTP_URL ignored)',
    });
  });

  it('checks SVC_STACK before looking for an engine', async () => {
    let err: unknown;
    await chooseStack({ SVC_STACK: 'kubernetes' }, unreachable).catch((e: unknown) => (err = e));
    expect(err)
      .to.be.instanceOf(Error)
      .with.property('message')
      .that.match(/not "kubernetes"/);
  });
});
