import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { eventCatalog } from '../../app/runtime.ts';
import { subjectOf } from '../../events/schema-registry.ts';
import { testEnv } from '../support/env.ts';
import { registryOf } from '../support/registered-codec.ts';
import { STACK_TIMEOUT_MS, useStack } from '../support/stack.ts';

const run = promisify(execFile);

/** The deploy step as an operator runs it: `svc schemas register`, then `svc schemas check`. */
describe('svc schemas (e2e)', function () {
  this.timeout(120_000);

  it('registers every version of every type under its subject with its mode, the same ids when run again', async function () {
    this.timeout(STACK_TIMEOUT_MS);
    const stack = await useStack();
    const env = { ...process.env, ...testEnv(stack, { SCHEMA_REGISTER_AT_START: 'false' }) };
    const svc = (...args: string[]) =>
      run(process.execPath, ['--disable-warning=TimeoutNegativeWarning', 'app/cli/svc.ts', ...args], { env, timeout: 60_000 });
    const catalog = eventCatalog(env.KAFKA_TOPIC_PREFIX);
    const versions = catalog.types().reduce((n, t) => n + catalog.versions(t).length, 0);

    const first = await svc('schemas', 'register');
    const lines = first.stdout.trim().split('\n');
    expect(lines.at(-1)).to.equal(`${versions} schema versions registered in ${catalog.types().length} subjects`);
    const keyV4 = catalog.versions('key.generated')[3]!;
    const subject = subjectOf(catalog.topicOf('key.generated'), keyV4);
    const id = await registryOf(stack).idOf(subject, keyV4);
    expect(lines).to.include(`${subject} v4 -> id ${id} (BACKWARD_TRANSITIVE)`);
    expect(await registryOf(stack).modeOf(subject)).to.equal('BACKWARD_TRANSITIVE');
    const usage = catalog.current('usage.incremented');
    expect(await registryOf(stack).modeOf(subjectOf(catalog.topicOf('usage.incremented'), usage))).to.equal('FULL_TRANSITIVE');

    const again = await svc('schemas', 'register');
    expect(again.stdout).to.equal(first.stdout);

    const check = await svc('schemas', 'check');
    expect(check.stdout).to.equal('every schema history keeps its mode\n');
  });
});
