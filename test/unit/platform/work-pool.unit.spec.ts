import { expect } from 'chai';
import { task, TaskError } from '../../../services/platform/work/task.ts';
import { WorkBudgetError, WorkPool, WorkPoolClosed, WorkQueueFull } from '../../../services/platform/work/work-pool.ts';

const tasks = new URL('../../support/work-tasks.ts', import.meta.url);
const echo = task<{ value: string }, string>(tasks, 'echo');
const spin = task<Record<string, never>, never>(tasks, 'spin');
const hog = task<Record<string, never>, number>(tasks, 'hog');
const refuse = task<{ reason: string }, never>(tasks, 'refuse');
const backtrack = task<{ length: number }, boolean>(tasks, 'backtrack');

/** Resolves with how the promise settled, so a test can look at a rejection without a try. */
const settled = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );

describe('WorkPool (worker threads with budgets)', function () {
  this.timeout(20_000);
  let pool: WorkPool;
  afterEach(() => pool.close());

  it('runs a task on a thread and hands back its answer', async () => {
    pool = new WorkPool({ name: 'test', threads: 1, memoryMb: 64, timeoutMs: 5000, queuePerTenant: 10 });
    expect(await pool.run(echo, { value: 'hi' }, { tenant: 'a' })).to.equal('hi');
  });

  it('ends a task that runs past its time, and the next task gets a fresh thread', async () => {
    pool = new WorkPool({ name: 'test', threads: 1, memoryMb: 64, timeoutMs: 300, queuePerTenant: 10 });
    const stuck = await settled(pool.run(spin, {}, { tenant: 'a' }));
    expect((stuck as { error: WorkBudgetError }).error)
      .to.be.instanceOf(WorkBudgetError)
      .with.property('budget', 'time');
    expect(await pool.run(echo, { value: 'after' }, { tenant: 'b' })).to.equal('after');
  });

  it('stops a backtracking regular expression mid-match', async () => {
    pool = new WorkPool({ name: 'test', threads: 1, memoryMb: 64, timeoutMs: 300, queuePerTenant: 10 });
    const outcome = await settled(pool.run(backtrack, { length: 60 }, { tenant: 'a' }));
    expect((outcome as { error: WorkBudgetError }).error)
      .to.be.instanceOf(WorkBudgetError)
      .with.property('budget', 'time');
  });

  it('ends a task that outgrows its heap', async () => {
    pool = new WorkPool({ name: 'test', threads: 1, memoryMb: 32, timeoutMs: 15_000, queuePerTenant: 10 });
    const outcome = await settled(pool.run(hog, {}, { tenant: 'a' }));
    expect((outcome as { error: WorkBudgetError }).error)
      .to.be.instanceOf(WorkBudgetError)
      .with.property('budget', 'memory');
    expect(await pool.run(echo, { value: 'alive' }, { tenant: 'a' })).to.equal('alive');
  });

  it("passes a task's own refusal through with its name and code", async () => {
    pool = new WorkPool({ name: 'test', threads: 1, memoryMb: 64, timeoutMs: 5000, queuePerTenant: 10 });
    const outcome = await settled(pool.run(refuse, { reason: 'no' }, { tenant: 'a' }));
    const error = (outcome as { error: TaskError }).error;
    expect(error).to.be.instanceOf(TaskError);
    expect(error).to.include({ name: 'RefusedInput', code: 'REFUSED', message: 'no' });
  });

  it("serves a second tenant's task before the first tenant's backlog", async () => {
    pool = new WorkPool({ name: 'test', threads: 1, memoryMb: 64, timeoutMs: 5000, queuePerTenant: 100 });
    const done: string[] = [];
    const all = [];
    for (let i = 0; i < 6; i++) all.push(pool.run(echo, { value: `a${i}` }, { tenant: 'a' }).then((v) => done.push(v)));
    all.push(pool.run(echo, { value: 'b0' }, { tenant: 'b' }).then((v) => done.push(v)));
    await Promise.all(all);
    // a0 took the thread at once; b0 is next, not behind a1..a5.
    expect(done.indexOf('b0')).to.equal(1);
  });

  it('refuses a tenant past its bound of waiting tasks, and only that tenant', async () => {
    pool = new WorkPool({ name: 'test', threads: 1, memoryMb: 64, timeoutMs: 5000, queuePerTenant: 2 });
    const first = pool.run(spin, {}, { tenant: 'a', timeoutMs: 200 });
    const waiting = [pool.run(echo, { value: '1' }, { tenant: 'a' }), pool.run(echo, { value: '2' }, { tenant: 'a' })];
    const third = await settled(pool.run(echo, { value: '3' }, { tenant: 'a' }));
    expect((third as { error: Error }).error).to.be.instanceOf(WorkQueueFull);
    const other = pool.run(echo, { value: 'b' }, { tenant: 'b' });
    await settled(first);
    expect(await Promise.all([...waiting, other])).to.deep.equal(['1', '2', 'b']);
  });

  it('aborts a running task by ending its thread, and a waiting one by removing it', async () => {
    pool = new WorkPool({ name: 'test', threads: 1, memoryMb: 64, timeoutMs: 60_000, queuePerTenant: 10 });
    const running = new AbortController();
    const waiting = new AbortController();
    const a = settled(pool.run(spin, {}, { tenant: 'a', signal: running.signal }));
    const b = settled(pool.run(echo, { value: 'never' }, { tenant: 'a', signal: waiting.signal }));
    waiting.abort(new Error('gave up'));
    running.abort(new Error('stopping'));
    expect(((await a) as { error: Error }).error.message).to.equal('stopping');
    expect(((await b) as { error: Error }).error.message).to.equal('gave up');
  });

  it('close() ends a task in the middle of an endless loop and refuses what waits', async () => {
    pool = new WorkPool({ name: 'test', threads: 1, memoryMb: 64, timeoutMs: 60_000, queuePerTenant: 10 });
    const a = settled(pool.run(spin, {}, { tenant: 'a' }));
    const b = settled(pool.run(echo, { value: 'x' }, { tenant: 'b' }));
    await pool.close();
    expect(((await a) as { error: Error }).error).to.be.instanceOf(WorkPoolClosed);
    expect(((await b) as { error: Error }).error).to.be.instanceOf(WorkPoolClosed);
    expect(((await settled(pool.run(echo, { value: 'y' }, { tenant: 'a' }))) as { error: Error }).error).to.be.instanceOf(WorkPoolClosed);
  });
});
