import { expect } from 'chai';
import { claimOf, isCodeClaim, sentencesOf } from '../../../services/integration/checks/claims.ts';
import { codeFacts } from '../../../services/integration/checks/code-facts.ts';
import { judge, verdictOf, type CheckResult, type Evidence } from '../../../services/integration/checks/judge.ts';
import { answerSchema, parseJudgement } from '../../../services/integration/llm/model-judge.ts';
import { samplePageFacts } from '../../support/page-facts-sample.ts';

const BUTTON = `export function AddToCartButton({ productId, quantity = 1, label = 'Add to cart' }) {
  if (!productId) {
    throw new Error('productId is required');
  }
  return button;
}`;

const CLAMP = `export function clampQuantity(quantity, max = 10) {
  if (typeof quantity !== 'number' || Number.isNaN(quantity)) {
    throw new TypeError('quantity must be a number');
  }
  if (quantity < 0) throw new RangeError('quantity must not be negative');
  return Math.floor(quantity);
}`;

const page = samplePageFacts;

const evidence = (overrides: Partial<Evidence> = {}): Evidence => ({
  defined: true,
  code: codeFacts(CLAMP, 11),
  page: page(),
  ...overrides,
});
const decide = (sentence: string, e: Evidence = evidence()) => judge(sentence, claimOf(sentence), e);

describe('integration validate: sentences, claims and their verdicts (unit)', () => {
  it('splits sentences at their ends, not inside quotes, paths or abbreviations', () => {
    expect(
      sentencesOf(
        'It is visible. Clicking it opens the "Added to cart. Now" dialog! It goes to /checkout.html\nIt posts to /api/cart; done',
      ),
    ).to.deep.equal([
      'It is visible',
      'Clicking it opens the "Added to cart. Now" dialog',
      'It goes to /checkout.html',
      'It posts to /api/cart',
      'done',
    ]);
    expect(sentencesOf("It's the user's button. It works")).to.deep.equal(["It's the user's button", 'It works']);
    expect(sentencesOf('   ')).to.deep.equal([]);
  });

  it('reads the claims the page and the code can decide, and leaves the rest open', () => {
    expect(claimOf('It is visible')).to.deep.equal({ kind: 'visible', negated: false });
    // Words inside quotes are the label's, not the claim's (found by npm run bench:judge).
    expect(claimOf('It reads "Go to checkout"')).to.deep.equal({ kind: 'name', negated: false, text: 'Go to checkout' });
    expect(claimOf('It is labelled "Do not disturb"')).to.deep.equal({ kind: 'name', negated: false, text: 'Do not disturb' });
    expect(claimOf('It is not labelled "Go to checkout"')).to.deep.equal({ kind: 'name', negated: true, text: 'Go to checkout' });
    expect(claimOf('It is hidden until the cart has items')).to.deep.equal({ kind: 'visible', negated: true });
    expect(claimOf('It is disabled')).to.deep.equal({ kind: 'enabled', negated: true });
    expect(claimOf('It is not disabled')).to.deep.equal({ kind: 'enabled', negated: false });
    expect(claimOf('It is labelled "Add to cart"')).to.deep.equal({ kind: 'name', negated: false, text: 'Add to cart' });
    expect(claimOf('Clicking it opens the Added to cart dialog')).to.deep.equal({
      kind: 'opens-dialog',
      negated: false,
      name: 'Added to cart',
    });
    expect(claimOf('Clicking it opens a modal')).to.deep.equal({ kind: 'opens-dialog', negated: false, name: null });
    expect(claimOf('Clicking it navigates to /checkout.html')).to.deep.equal({
      kind: 'navigates',
      negated: false,
      target: '/checkout.html',
    });
    expect(claimOf('It sends a POST request to /api/cart')).to.deep.equal({
      kind: 'requests',
      negated: false,
      method: 'POST',
      path: '/api/cart',
    });
    expect(claimOf('It posts the product to the server')).to.deep.equal({ kind: 'requests', negated: false, method: 'POST', path: null });
    expect(claimOf('It has no accessibility violations')).to.deep.equal({ kind: 'accessible', negated: false });
    expect(claimOf('It throws a RangeError when the quantity is negative')).to.deep.equal({
      kind: 'throws',
      negated: false,
      errorType: 'RangeError',
      condition: 'the quantity is negative',
    });
    expect(claimOf('It accepts a productId prop')).to.deep.equal({ kind: 'parameter', negated: false, name: 'productId' });
    expect(claimOf('Customers love it')).to.deep.equal({ kind: 'open' });
  });

  it('reads throws with their guards and the parameters, destructured ones included', () => {
    expect(codeFacts(BUTTON, 10)).to.deep.equal({
      throws: [{ errorType: 'Error', message: 'productId is required', condition: '!productId', line: 12 }],
      parameters: ['productId', 'quantity', 'label'],
    });
    const clamp = codeFacts(CLAMP, 1);
    expect(clamp.throws.map((t) => [t.errorType, t.condition, t.line])).to.deep.equal([
      ['TypeError', "typeof quantity !== 'number' || Number.isNaN(quantity)", 3],
      ['RangeError', 'quantity < 0', 5],
    ]);
    expect(codeFacts('export const f = (a: number, b: string = "x"): number => a;', 1).parameters).to.deep.equal(['a', 'b']);
  });

  it('decides page claims from the page facts, and fails what the page does not do', () => {
    expect(decide('It is visible').status).to.equal('passed');
    expect(decide('It is labelled "Add to cart"').status).to.equal('passed');
    expect(decide('It is labelled "Buy now"')).to.include({ status: 'failed' });
    expect(decide('Clicking it opens the "Added to cart" dialog').status).to.equal('passed');
    expect(decide('Clicking it opens the "Sign in" dialog').status).to.equal('failed');
    expect(decide('It posts to /api/cart').status).to.equal('passed');
    expect(decide('It posts to /api/orders')).to.include({
      status: 'failed',
      detail: 'a click sent POST /api/cart (200), not POST /api/orders',
    });
    expect(decide('Clicking it navigates to /checkout')).to.include({ status: 'failed', detail: 'a click did not navigate' });
    expect(decide('It does not navigate away').status).to.equal('passed');
    expect(decide('It is disabled').status).to.equal('failed');
    expect(decide('It is a button').status).to.equal('passed');
  });

  it('keeps undecidable claims unknown: no url, component not on the page, a sentence nothing checks', () => {
    expect(decide('It is visible', evidence({ page: null }))).to.include({ status: 'unknown', decidedBy: null });
    const missing = evidence({ page: page({ located: null }) });
    expect(decide('It is visible', missing).status).to.equal('failed');
    expect(decide('Clicking it opens a dialog', missing).status).to.equal('unknown');
    expect(decide('Clicking it opens a dialog', evidence({ page: page({ click: null }) })).status).to.equal('unknown');
    expect(decide('Customers love it').status).to.equal('unknown');
    expect(decide('It throws a RangeError', evidence({ defined: false, code: null })).status).to.equal('unknown');
  });

  it('leaves code claims unknown with the reason when no collection was read, and still decides the page', () => {
    const pageOnly = evidence({ defined: false, code: null, noCode: 'you have no collection of code' });
    expect(decide('It throws a RangeError', pageOnly)).to.deep.equal({
      description: 'It throws a RangeError',
      status: 'unknown',
      detail: 'a check of the code, and no code was read: you have no collection of code',
      decidedBy: null,
    });
    expect(decide('It takes a max parameter', pageOnly).status).to.equal('unknown');
    expect(decide('It is visible', pageOnly)).to.include({ status: 'passed', decidedBy: 'evidence' });
    expect(claimOf('It throws a RangeError').kind).to.equal('throws');
    expect(
      ['It throws a RangeError', 'It takes a max parameter', 'It is visible', 'Customers love it'].map((s) => isCodeClaim(claimOf(s))),
    ).to.deep.equal([true, true, false, false]);
  });

  it('decides code claims from the definition', () => {
    expect(decide('It throws a RangeError when the quantity is negative')).to.include({ status: 'passed' });
    expect(decide('It throws a SyntaxError').status).to.equal('failed');
    expect(decide('It never throws').status).to.equal('failed');
    expect(decide('It throws a TypeError when the moon is full').status).to.equal('unknown');
    expect(decide('It takes a max parameter').status).to.equal('passed');
    expect(decide('It takes a min parameter').status).to.equal('failed');
  });

  it('gives valid false on any failure, null on any unknown, true only when all passed', () => {
    const check = (
      status: CheckResult['status'],
      decidedBy: CheckResult['decidedBy'] = status === 'unknown' ? null : 'evidence',
    ): CheckResult => ({ description: 'x', status, detail: '', decidedBy });
    expect(verdictOf([check('passed'), check('passed')])).to.deep.equal({
      valid: true,
      confidence: 1,
      counts: { passed: 2, failed: 0, unknown: 0 },
      modelValid: null,
    });
    expect(verdictOf([check('passed'), check('unknown')])).to.include({ valid: null, confidence: 0.5 });
    expect(verdictOf([check('failed'), check('unknown')])).to.include({ valid: false, confidence: 0.5 });
    expect(verdictOf([])).to.include({ valid: null, confidence: 0 });
  });

  it("never lets a model's say-so make valid true: valid is the evidence's, the model's verdict is modelValid beside it", () => {
    const check = (status: CheckResult['status'], decidedBy: CheckResult['decidedBy']): CheckResult => ({
      description: 'x',
      status,
      detail: '',
      decidedBy,
    });
    // The evidence passed one, the model "passed" the other: the evidence alone leaves it undecided.
    expect(verdictOf([check('passed', 'evidence'), check('passed', 'model')])).to.deep.equal({
      valid: null,
      confidence: 0.5,
      counts: { passed: 1, failed: 0, unknown: 1 },
      modelValid: true,
    });
    expect(verdictOf([check('passed', 'model'), check('passed', 'model')])).to.deep.equal({
      valid: null,
      confidence: 0,
      counts: { passed: 0, failed: 0, unknown: 2 },
      modelValid: true,
    });
    // A failure the evidence shows stands whatever the model says; one the model alone saw is only modelValid's.
    expect(verdictOf([check('failed', 'evidence'), check('passed', 'model')])).to.include({ valid: false, modelValid: false });
    expect(verdictOf([check('passed', 'evidence'), check('failed', 'model')])).to.include({ valid: null, modelValid: false });
    expect(verdictOf([check('passed', 'model'), check('unknown', null)])).to.include({ valid: null, modelValid: null });
  });

  it("keeps a model's judgement to the checks asked about and to passed or failed", () => {
    const content =
      'Sure: {"checks":[{"index":1,"status":"passed","reason":"the handler posts"},{"index":1,"status":"failed"},{"index":7,"status":"passed"},{"index":2,"status":"unknown"},{"index":3,"status":"failed","reason":5}]}';
    expect(parseJudgement(content, [1, 2, 3])).to.deep.equal([
      { index: 1, status: 'passed', reason: 'the handler posts' },
      { index: 3, status: 'failed', reason: '' },
    ]);
    expect(parseJudgement('no json here', [1])).to.deep.equal([]);
    expect(parseJudgement('{"checks": "nope"}', [1])).to.deep.equal([]);
  });

  it('reads the one-key-per-check answer the schema asks for, and only the keys asked about', () => {
    const content = JSON.stringify({
      check_1: { reason: 'the page shows it', status: 'passed' },
      check_2: { reason: 'cannot tell', status: 'unknown' },
      check_3: { reason: 'it is a link', status: 'failed' },
      check_9: { reason: 'not asked', status: 'passed' },
    });
    expect(parseJudgement(content, [1, 2, 3])).to.deep.equal([
      { index: 1, status: 'passed', reason: 'the page shows it' },
      { index: 3, status: 'failed', reason: 'it is a link' },
    ]);
    expect(parseJudgement('[1, 2]', [1])).to.deep.equal([]);
    expect(parseJudgement('{"check_1": "passed"}', [1])).to.deep.equal([]);
  });

  it('asks for exactly the checks of the question, each with a reason and a status', () => {
    const schema = answerSchema({
      checks: [
        { index: 4, description: 'a' },
        { index: 0, description: 'b' },
      ],
    });
    expect(schema).to.deep.include({ required: ['check_4', 'check_0'], additionalProperties: false, type: 'object' });
    const entry = (schema.properties as Record<string, { required: string[]; properties: { status: { enum: string[] } } }>).check_4;
    expect(entry?.required).to.deep.equal(['reason', 'status']);
    expect(entry?.properties.status.enum).to.deep.equal(['passed', 'failed', 'unknown']);
  });
});
