import { expect } from 'chai';
import { codeFacts } from '../../../services/integration/checks/code-facts.ts';
import { WorkPool } from '../../../services/platform/work/work-pool.ts';
import { FACTS_OF } from './code-facts.task.ts';

/**
 * validate reads throws out of the indexed definition's text with a regular expression, on the
 * loop that serves requests: customer text must not make it backtrack. It runs on a worker here
 * only so that the old, exponential expression fails the test instead of hanging it.
 */
describe('integration validate: code facts of hostile text stay cheap (unit)', function () {
  this.timeout(20_000);
  let pool: WorkPool;
  beforeEach(() => {
    pool = new WorkPool({ name: 'code facts', threads: 1, memoryMb: 64, timeoutMs: 5000, queuePerTenant: 1 });
  });
  afterEach(() => pool.close());

  it('an unterminated string of backslashes after `throw new` is read in linear time', async () => {
    // 38 backslashes took the old expression nine seconds, and each one more 1.6 times as long.
    const content = `export function f(a) {\n  if (a) throw new Error("${'\\'.repeat(2000)}x\n  return a;\n}`;
    const facts = await pool.run(FACTS_OF, { content, startLine: 1 }, { tenant: 't' });
    expect(facts.throws).to.deep.equal([{ errorType: 'Error', message: null, condition: 'a', line: 2 }]);
  });

  it('still reads messages with escapes in them', () => {
    const content = `function g(p) {\n  if (!p) throw new TypeError('it\\'s a \\\\ path');\n  throw new Error("a\\"b");\n}`;
    expect(codeFacts(content, 5).throws).to.deep.equal([
      { errorType: 'TypeError', message: "it\\'s a \\\\ path", condition: '!p', line: 6 },
      { errorType: 'Error', message: 'a\\"b', condition: null, line: 7 },
    ]);
  });
});
