import { expect } from 'chai';
import { parserFor } from '../../../services/rag/chunking/parsers.ts';
import { bindArgs, buildArgs } from '../../../services/integration/generate/unit/arguments.ts';
import { poolsOf } from '../../../services/integration/generate/unit/candidates.ts';
import { Crash, evaluate, Unsolvable } from '../../../services/integration/generate/unit/evaluate.ts';
import type { Env } from '../../../services/integration/generate/unit/evaluate.ts';
import { toExpr } from '../../../services/integration/generate/unit/expr.ts';
import type { Expr } from '../../../services/integration/generate/unit/expr.ts';
import { NO_DOC } from '../../../services/integration/generate/unit/jsdoc.ts';
import { leavesOf, signatureOf } from '../../../services/integration/generate/unit/signature.ts';
import { climb, solve } from '../../../services/integration/generate/unit/solver.ts';
import type { SearchSpace } from '../../../services/integration/generate/unit/solver.ts';
import { OMIT, renderValue } from '../../../services/integration/generate/unit/values.ts';
import type { Arg, Value } from '../../../services/integration/generate/unit/values.ts';

async function expression(text: string): Promise<Expr> {
  const parser = await parserFor('javascript');
  const tree = parser.parse(`(${text});`);
  const node = tree?.rootNode.namedChildren[0]?.namedChildren[0];
  if (!tree || !node) throw new Error(`cannot parse ${text}`);
  const expr = toExpr(node);
  tree.delete();
  return expr;
}

function env(values: Record<string, Value>): Env {
  return new Map(Object.entries(values).map(([k, v]) => [k, { known: true as const, value: v }]));
}

async function value(text: string, names: Record<string, Value> = {}): Promise<Value> {
  return evaluate(await expression(text), env(names));
}

/** A function's parameters and conditions, the way the planner searches them. */
async function spaceOf(
  source: string,
): Promise<{ space: SearchSpace; conditions: Expr[]; params: ReturnType<typeof signatureOf>['params'] }> {
  const parser = await parserFor('javascript');
  const tree = parser.parse(source);
  const fn = tree?.rootNode.namedChildren[0];
  if (!tree || !fn) throw new Error('no function');
  const { params } = signatureOf(fn, NO_DOC);
  const conditions: Expr[] = [];
  const visit = (n: NonNullable<typeof fn>): void => {
    if (n.type === 'if_statement') {
      const condition = n.childForFieldName('condition');
      if (condition) conditions.push(toExpr(condition));
    }
    for (const child of n.namedChildren) if (child) visit(child);
  };
  visit(fn);
  const leaves = leavesOf(params);
  const space: SearchSpace = { leaves, pools: poolsOf(leaves, conditions), vary: leaves.map((l) => l.id) };
  tree.delete();
  return { space, conditions, params };
}

describe('generate unit: the condition evaluator (unit)', () => {
  it('follows JavaScript for comparisons, typeof, logic and the whitelisted built-ins', async () => {
    expect(await value('q < 0 || q > max', { q: -1, max: 10 })).to.equal(true);
    expect(await value("typeof q !== 'number' || Number.isNaN(q)", { q: NaN })).to.equal(true);
    expect(await value("typeof q !== 'number' || Number.isNaN(q)", { q: 3 })).to.equal(false);
    expect(await value('!Number.isInteger(c)', { c: 1.5 })).to.equal(true);
    expect(await value('s.length !== 3', { s: 'USD' })).to.equal(false);
    expect(await value('p == null', { p: undefined })).to.equal(true);
    expect(await value('p === undefined', { p: null })).to.equal(false);
    expect(await value('Array.isArray(a) && a.length > 0', { a: [1] })).to.equal(true);
    expect(await value('!(n >= 1 && n <= 5)', { n: 6 })).to.equal(true);
    expect(await value('Math.floor(q)', { q: 2.7 })).to.equal(2);
    expect(await value('`${a}-${b}`', { a: 1, b: 'x' })).to.equal('1-x');
    expect(await value("o.kind === 'warn' ? 1 : 2", { o: { kind: 'warn' } })).to.equal(1);
    expect(await value('s.trim() === ""', { s: '  ' })).to.equal(true);
    expect(await value("'k' in o", { o: { k: 1 } })).to.equal(true);
  });

  it('short-circuits like JavaScript: an unknown right side is never read when the left decides', async () => {
    expect(await value('a || unknownThing(a)', { a: true })).to.equal(true);
    expect(await value('a && unknownThing(a)', { a: 0 })).to.equal(0);
  });

  it('reports what it does not model as Unsolvable, and what the code would fail on as Crash', async () => {
    const unsolvable = async (text: string, names: Record<string, Value> = {}): Promise<void> => {
      try {
        await value(text, names);
        expect.fail(`${text} should be unsolvable`);
      } catch (error) {
        expect(error, text).to.be.instanceOf(Unsolvable);
      }
    };
    await unsolvable('LIMIT > 3');
    await unsolvable('helper(q)', { q: 1 });
    await unsolvable("typeof window === 'undefined'");
    await unsolvable('o.toString()', { o: {} });
    await unsolvable('n.toFixed(2)', { n: 1 });
    try {
      await value('p.length', { p: null });
      expect.fail('reading .length of null is the code failing');
    } catch (error) {
      expect(error).to.be.instanceOf(Crash);
    }
    try {
      await value("'k' in s", { s: 'text' });
      expect.fail('`in` on a string throws in JavaScript');
    } catch (error) {
      expect(error).to.be.instanceOf(Crash);
    }
  });

  it('binds arguments as JavaScript does: defaults for undefined, destructuring, and a throw for destructuring undefined', async () => {
    const { params } = await spaceOf("function f(q, max = 10, { label = 'x', id } = {}) {}");
    const bound = bindArgs(params, [3, OMIT, { id: 'a' }]);
    expect([...bound].map(([k, b]) => [k, b.known ? b.value : '?'])).to.deep.equal([
      ['q', 3],
      ['max', 10],
      ['label', 'x'],
      ['id', 'a'],
    ]);
    const required = await spaceOf('function g({ productId }) {}');
    expect(() => bindArgs(required.params, [])).to.throw(Crash);
  });

  it('writes values as valid literals: -0, NaN, Infinity, undefined, bigint, quotes and __proto__', () => {
    expect(renderValue(-0)).to.equal('-0');
    expect(renderValue(NaN)).to.equal('NaN');
    expect(renderValue(-Infinity)).to.equal('-Infinity');
    expect(renderValue([undefined, 1n])).to.equal('[undefined, 1n]');
    expect(renderValue('it\'s "x"\n')).to.equal(`'it\\'s "x"\\n'`);
    expect(renderValue({ 'a-b': 1, ok: true })).to.equal("{ 'a-b': 1, ok: true }");
    const proto: Record<string, Value> = {};
    Object.defineProperty(proto, '__proto__', { value: 1, enumerable: true });
    expect(renderValue(proto)).to.equal("{ ['__proto__']: 1 }");
  });
});

describe('generate unit: the argument solver (unit)', () => {
  it('derives candidates from the conditions: both sides of each compared number, lengths, typeof and NaN probes', async () => {
    const { space } = await spaceOf(
      "function f(q, max = 10, code) { if (typeof q !== 'number' || Number.isNaN(q)) throw 1; if (q < 0) throw 2; if (code.length !== 3) throw 3; }",
    );
    const [q, max, code] = space.leaves;
    const pool = (id: string | undefined): string[] =>
      (space.pools.get(id as string) ?? []).map((v) => (v === OMIT ? '<omit>' : renderValue(v)));
    expect(pool(q?.id)).to.include.members(['-1', '0', '1', 'NaN', "'text'"]);
    expect(pool(max?.id)[0]).to.equal('<omit>');
    expect(pool(code?.id)).to.include.members(["'ab'", "'abc'", "'abcd'"]);
  });

  it('finds arguments that satisfy a condition and none of the guards before it, changing as few as it can', async () => {
    const { space, conditions, params } = await spaceOf(
      'function f(q, max = 10) { if (q < 0) throw 1; if (max < 1) throw 2; if (q > max) return max; }',
    );
    const [qNegative, maxSmall, qOver] = conditions as [Expr, Expr, Expr];
    const holds = (e: Expr, a: ReadonlyMap<string, Arg>): boolean => Boolean(evaluate(e, bindArgs(params, buildArgs(params, a))));
    const over = solve(space, (a) => holds(qOver, a) && !holds(qNegative, a) && !holds(maxSmall, a));
    expect(over && [...over.values()]).to.deep.equal([11, OMIT]);
    const guard = solve(space, (a) => holds(maxSmall, a) && !holds(qNegative, a));
    expect(guard && [...guard.values()]).to.deep.equal([1, 0]);
  });

  it('says so when nothing it derives satisfies a condition', async () => {
    const { space, conditions, params } = await spaceOf('function f(q) { if (q * 3 === 7) throw 1; }');
    const [third] = conditions as [Expr];
    expect(solve(space, (a) => Boolean(evaluate(third, bindArgs(params, buildArgs(params, a)))))).to.equal(undefined);
  });

  it('climbs past a long run of guards one parameter at a time', async () => {
    const source = 'function f(a, b, c, d) { if (a < 5) throw 1; if (b < 6) throw 2; if (c < 7) throw 3; if (d < 8) throw 4; }';
    const { space, conditions, params } = await spaceOf(source);
    const passed = (a: ReadonlyMap<string, Arg>): number =>
      conditions.filter((c) => !evaluate(c, bindArgs(params, buildArgs(params, a)))).length;
    const top = climb(space, passed);
    expect([...top.values()]).to.deep.equal([5, 6, 7, 8]);
  });
});
