import { expect } from 'chai';
import type { Node } from 'web-tree-sitter';
import { parserFor } from '../../../services/rag/chunking/parsers.ts';
import { findComponent } from '../../../services/integration/generate/unit/component.ts';
import { printExpr } from '../../../services/integration/generate/unit/expr.ts';
import { parseDocComment } from '../../../services/integration/generate/unit/jsdoc.ts';
import { leavesOf, signatureOf } from '../../../services/integration/generate/unit/signature.ts';
import type { Param, Signature } from '../../../services/integration/generate/unit/signature.ts';
import { describeType, parseType } from '../../../services/integration/generate/unit/type-desc.ts';

async function signature(source: string, name: string, grammar: 'javascript' | 'typescript' = 'javascript'): Promise<Signature> {
  const parser = await parserFor(grammar);
  const tree = parser.parse(source);
  if (!tree) throw new Error('no tree');
  const { component } = findComponent(tree.rootNode, name, 'src/x.js');
  const fn = component.fn as Node;
  const result = signatureOf(fn, component.doc);
  tree.delete();
  return result;
}

/** One line per parameter leaf: `label: type = default?` */
function summary(params: readonly Param[]): string[] {
  return leavesOf(params).map(
    (l) =>
      `${l.access ? [l.access.root, ...l.access.path].join('.') : l.label}: ${describeType(l.type)}${l.defaultExpr ? ` = ${printExpr(l.defaultExpr)}` : ''}${l.optional ? ' (optional)' : ''}`,
  );
}

describe('generate unit: signatures (unit)', () => {
  it('reads names, defaults and JSDoc types of a JavaScript function', async () => {
    const source = [
      '/**',
      ' * @param {number} quantity what the customer typed',
      ' * @param {number} [max=10] the most one order may hold',
      ' * @returns {number}',
      ' * @example clampQuantity(3) // => 3',
      ' */',
      'export function clampQuantity(quantity, max = 10) { return quantity; }',
    ].join('\n');
    const sig = await signature(source, 'clampQuantity');
    expect(summary(sig.params)).to.deep.equal(['quantity: number', 'max: number = 10 (optional)']);
    expect(sig.returns && describeType(sig.returns)).to.equal('number');
    expect(sig.isAsync).to.equal(false);
  });

  it('reads TypeScript annotations, optional parameters and async return types', async () => {
    const source = "export async function load(id: string, retries?: number, mode: 'a' | 'b' = 'a'): Promise<string[]> { return []; }";
    const sig = await signature(source, 'load', 'typescript');
    expect(summary(sig.params)).to.deep.equal(['id: string', 'retries: number (optional)', 'mode: "a" | "b" = \'a\' (optional)']);
    expect(sig.returns && describeType(sig.returns)).to.equal('Promise<string[]>');
    expect(sig.isAsync).to.equal(true);
  });

  it('reads destructured object parameters with their defaults, renames and JSDoc record type', async () => {
    const source = [
      '/** @param {{ productId: string, quantity?: number, label?: string }} props */',
      "export const Button = ({ productId, quantity = 1, label: text = 'Add' }) => productId;",
    ].join('\n');
    const sig = await signature(source, 'Button');
    expect(summary(sig.params)).to.deep.equal(['productId: string', 'quantity: number = 1 (optional)', "text: string = 'Add' (optional)"]);
    const [props] = sig.params;
    expect(props?.kind).to.equal('object');
  });

  it('treats a typed options object as its properties, read as options.key', async () => {
    const source = 'export function f(options: { max: number; name?: string }) { return options.max; }';
    const sig = await signature(source, 'f', 'typescript');
    expect(summary(sig.params)).to.deep.equal(['options.max: number', 'options.name: string (optional)']);
  });

  it('folds JSDoc `props.key` lines into the parameter they describe', () => {
    const doc = parseDocComment(
      ['/**', ' * @param {Object} props', ' * @param {string} props.id', ' * @param {number} [props.count]', ' */'].join('\n'),
      1,
    );
    expect(doc.params.map((p) => `${p.name}: ${p.type ? describeType(p.type) : '?'}`)).to.deep.equal([
      'props: { id: string; count?: number }',
    ]);
  });

  it('keeps array patterns and rest parameters as names it does not choose values for', async () => {
    const sig = await signature('export function f([a, b], ...rest) {}', 'f');
    expect(sig.params.map((p) => p.kind)).to.deep.equal(['opaque', 'opaque']);
    expect(leavesOf(sig.params)).to.deep.equal([]);
  });

  it('parses the type language both annotations and JSDoc use, and names what it cannot read', () => {
    expect(describeType(parseType('Array<string | null>'))).to.equal('(string | null)[]');
    expect(describeType(parseType('{ a: number, b?: "x" | "y" }'))).to.equal('{ a: number; b?: "x" | "y" }');
    expect(describeType(parseType('?number'))).to.equal('number | null');
    expect(parseType('(a: string) => void').kind).to.equal('function');
    expect(parseType('Map<string, number>')).to.deep.equal({ kind: 'named', name: 'Map' });
    expect(parseType('{ [key: string]: number }').kind).to.equal('named');
  });

  it('records @example lines with their line numbers', () => {
    const doc = parseDocComment(
      ['/**', ' * Formats.', ' * @example formatPrice(5) // => "$0.05"', ' * @example', ' *   formatPrice(0) // => "free"', ' */'].join(
        '\n',
      ),
      10,
    );
    expect(doc.examples).to.deep.equal([
      { text: 'formatPrice(5) // => "$0.05"', line: 12 },
      { text: 'formatPrice(0) // => "free"', line: 14 },
    ]);
  });
});
