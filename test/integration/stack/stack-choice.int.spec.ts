import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import type { StackEnv } from '../../../deploy/local/stack.ts';
import { STACK_TIMEOUT_MS, useStack } from '../../support/stack.ts';
import { probeEngine } from '../../support/stack-choice.ts';

const run = promisify(execFile);

/**
 * SVC_STACK as a real run sees it: a mocha of its own (the project's .mocharc, so its global setup)
 * runs a spec that prints the stack it got. It is handed this run's servers, so the local path starts
 * nothing and the containers path, had it been taken, would have answered with other addresses.
 */
describe('the test run’s stack choice (integration)', function () {
  this.timeout(120_000);
  let stack: StackEnv;

  before(async function () {
    this.timeout(STACK_TIMEOUT_MS);
    stack = await useStack();
  });

  const mocha = async (svcStack: string) => {
    const env: NodeJS.ProcessEnv = { ...process.env, SVC_STACK: svcStack };
    for (const [name, value] of Object.entries(stack)) env[name] = value;
    return run(process.execPath, ['node_modules/mocha/bin/mocha.js', 'test/fixtures/stack-choice/print-stack.spec.ts'], { env }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );
  };
  const stackLines = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('stack:'));

  it('with SVC_STACK=containers and no engine, says so in one line and uses the local stack', async function () {
    const engine = await probeEngine();
    // With an engine the run takes the containers path; that path is the whole suite under SVC_STACK=containers.
    if (engine.found) this.skip();
    const child = await mocha('containers');
    expect(child.code, child.stderr).to.equal(0);
    const lines = stackLines(child.stderr);
    expect(lines).to.have.length(1);
    expect(lines[0]).to.equal(
      `stack: local, the servers KAFKA_BROKERS, MONGODB_URI, SMTP_URL, RAG_DATABASE_URL name (SVC_STACK=containers, but no container engine: ${engine.reason})`,
    );
    const printed = /^STACK (.*)$/m.exec(child.stdout)?.[1];
    expect(printed, child.stdout).to.be.a('string');
    expect(JSON.parse(printed!)).to.deep.equal(stack);
  });

  it('fails the run before any test on an unknown SVC_STACK, naming the value', async () => {
    const child = await mocha('docker');
    expect(child.code).to.not.equal(0);
    expect(child.stderr).to.include('SVC_STACK must be local or containers (or unset, which is local), not "docker"');
    expect(child.stdout).not.to.match(/^STACK /m);
  });
});
