/**
 * A JSDoc block's tags that matter for tests: parameter types (with `[name=default]` and
 * `props.key` forms), the return type, and `@example` lines with their line numbers.
 */

import { parseJsDocType } from './type-desc.ts';
import type { PropertyType, TypeDesc } from './type-desc.ts';

export interface DocParam {
  name: string;
  type?: TypeDesc;
  optional: boolean;
}

export interface DocComment {
  /** top-level parameters in order, with `props.key` lines folded into their parent's record type */
  params: DocParam[];
  returns?: TypeDesc;
  examples: Array<{ text: string; line: number }>;
}

export const NO_DOC: DocComment = { params: [], examples: [] };

export function parseDocComment(text: string, firstLine: number): DocComment {
  const lines = text.split('\n').map((raw, i) => ({
    text: raw
      .replace(/^\s*\/\*\*\s?/, '')
      .replace(/\s*\*\/\s*$/, '')
      .replace(/^\s*\*\s?/, ''),
    line: firstLine + i,
  }));
  const params: DocParam[] = [];
  const nested: Array<{ parent: string; property: PropertyType }> = [];
  const examples: DocComment['examples'] = [];
  let returns: TypeDesc | undefined;
  let inExample = false;
  for (const { text: line, line: lineNo } of lines) {
    const tag = /^@(\w+)\s*(.*)$/.exec(line.trim());
    if (tag) {
      const [, name, rest = ''] = tag;
      inExample = name === 'example';
      if (inExample) {
        if (rest.trim()) examples.push({ text: rest.trim(), line: lineNo });
      } else if (name === 'param' || name === 'arg' || name === 'argument') {
        const param = paramTag(rest);
        if (!param) continue;
        const dot = param.name.indexOf('.');
        if (dot > 0)
          nested.push({
            parent: param.name.slice(0, dot),
            property: { name: param.name.slice(dot + 1), type: param.type ?? { kind: 'unknown' }, optional: param.optional },
          });
        else params.push(param);
      } else if (name === 'returns' || name === 'return') {
        const braced = bracedType(rest);
        if (braced) returns = parseJsDocType(braced.type).type;
      }
      continue;
    }
    if (inExample && line.trim()) examples.push({ text: line.trim(), line: lineNo });
  }
  for (const { parent, property } of nested) {
    const owner = params.find((p) => p.name === parent);
    // Only one level (`props.key`): deeper paths are rare and would need nested records.
    if (!owner || property.name.includes('.')) continue;
    const base = owner.type?.kind === 'record' ? owner.type.properties : [];
    owner.type = { kind: 'record', properties: [...base.filter((p) => p.name !== property.name), property] };
  }
  return returns ? { params, returns, examples } : { params, examples };
}

function paramTag(rest: string): DocParam | undefined {
  const braced = bracedType(rest);
  const afterType = braced ? braced.rest : rest;
  const parsed = braced ? parseJsDocType(braced.type) : undefined;
  const optionalName = /^\s*\[\s*([\w$.]+)\s*(?:=[^\]]*)?\]/.exec(afterType);
  const plainName = /^\s*([\w$.]+)/.exec(afterType);
  const name = optionalName?.[1] ?? plainName?.[1];
  if (!name) return undefined;
  const param: DocParam = { name, optional: Boolean(optionalName) || Boolean(parsed?.optional) };
  if (parsed) param.type = parsed.type;
  return param;
}

/** `{...}` at the start, braces balanced (`{{ a: string }}` is a record type). */
function bracedType(text: string): { type: string; rest: string } | undefined {
  const start = text.indexOf('{');
  if (start < 0 || text.slice(0, start).trim() !== '') return undefined;
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return { type: text.slice(start + 1, i), rest: text.slice(i + 1) };
  }
  return undefined;
}
