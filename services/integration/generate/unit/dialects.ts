/**
 * Each framework's way of writing the same three assertions: a call returns a value, a call throws
 * (or rejects with) an error, a call runs and its result has the declared type.
 */

import { identifier } from '../code-literals.ts';
import type { Framework } from './test-paths.ts';
import type { TypeCheck } from './type-desc.ts';
import { quote } from './values.ts';

export interface ErrorSpec {
  /** a constructor the test can name (a global error class, or one imported from the module) */
  ctor?: string;
  /** the constructor's name when the test cannot reference it */
  ctorName?: string;
  message?: string;
}

export type Assertion = { kind: 'equals'; expected: string } | { kind: 'throws'; error: ErrorSpec } | { kind: 'runs'; check?: TypeCheck };

export interface Dialect {
  /** the framework's own imports */
  imports(esm: boolean): string[];
  /** `call` is the call expression; `awaited` when the function is async */
  assert(call: string, assertion: Assertion, awaited: boolean): string[];
}

const GLOBAL_ERRORS = new Set([
  'Error',
  'TypeError',
  'RangeError',
  'SyntaxError',
  'ReferenceError',
  'EvalError',
  'URIError',
  'AggregateError',
]);

export function isGlobalError(name: string): boolean {
  return GLOBAL_ERRORS.has(name);
}

/** The error class as the test names it: written bare, so it must be an identifier. */
function ctorOf(error: ErrorSpec): string | undefined {
  return error.ctor === undefined ? undefined : identifier(error.ctor);
}

export function dialectFor(framework: Framework): Dialect {
  switch (framework) {
    case 'mocha':
      return chai;
    case 'vitest':
      return expectStyle((esm) =>
        esm ? ["import { describe, it, expect } from 'vitest';"] : ["const { describe, it, expect } = require('vitest');"],
      );
    case 'jest':
      return expectStyle(() => []);
    case 'node:test':
      return nodeTest;
  }
}

const chai: Dialect = {
  imports: (esm) => (esm ? ["import { expect } from 'chai';"] : ["const { expect } = require('chai');"]),
  assert(call, assertion, awaited) {
    const actual = awaited ? `await ${call}` : call;
    switch (assertion.kind) {
      case 'equals':
        return [`expect(${actual}).to.deep.equal(${assertion.expected});`];
      case 'throws': {
        const ctor = ctorOf(assertion.error);
        const { message } = assertion.error;
        if (awaited) {
          const lines = [`const error = await ${call}.then(() => undefined, (caught) => caught);`];
          lines.push(ctor ? `expect(error).to.be.an.instanceOf(${ctor});` : 'expect(error).to.be.an.instanceOf(Error);');
          if (message !== undefined) lines.push(`expect(error).to.have.property('message', ${quote(message)});`);
          return lines;
        }
        const args = [ctor, message === undefined ? undefined : quote(message)].filter((a) => a !== undefined);
        return [`expect(() => ${call}).to.throw(${args.join(', ')});`];
      }
      case 'runs': {
        const check = assertion.check;
        if (!check) return awaited ? [`await ${call};`] : [`expect(() => ${call}).to.not.throw();`];
        if (check.kind === 'array') return [`expect(${actual}).to.be.an('array');`];
        if (check.kind === 'instance') return [`expect(${actual}).to.be.an.instanceOf(${identifier(check.ctor)});`];
        if (check.names.length === 1) return [`expect(${actual}).to.be.a(${quote(check.names[0] as string)});`];
        return [`expect(typeof (${actual})).to.be.oneOf([${check.names.map(quote).join(', ')}]);`];
      }
    }
  },
};

function expectStyle(imports: (esm: boolean) => string[]): Dialect {
  return {
    imports,
    assert(call, assertion, awaited) {
      const actual = awaited ? `await ${call}` : call;
      switch (assertion.kind) {
        case 'equals':
          return [`expect(${actual}).toEqual(${assertion.expected});`];
        case 'throws': {
          const ctor = ctorOf(assertion.error);
          const { message } = assertion.error;
          const subject = awaited
            ? (m: string): string => `await expect(${call}).rejects.${m};`
            : (m: string): string => `expect(() => ${call}).${m};`;
          const lines: string[] = [];
          if (ctor) lines.push(subject(`toThrow(${ctor})`));
          if (message !== undefined) lines.push(subject(`toThrow(${quote(message)})`));
          if (lines.length === 0) lines.push(subject('toThrow()'));
          return lines;
        }
        case 'runs': {
          const check = assertion.check;
          if (!check) return awaited ? [`await ${call};`] : [`expect(() => ${call}).not.toThrow();`];
          if (check.kind === 'array') return [`expect(Array.isArray(${actual})).toBe(true);`];
          if (check.kind === 'instance') return [`expect(${actual}).toBeInstanceOf(${identifier(check.ctor)});`];
          if (check.names.length === 1) return [`expect(typeof (${actual})).toBe(${quote(check.names[0] as string)});`];
          return [`expect([${check.names.map(quote).join(', ')}]).toContain(typeof (${actual}));`];
        }
      }
    },
  };
}

const nodeTest: Dialect = {
  imports: (esm) =>
    esm
      ? ["import { describe, it } from 'node:test';", "import assert from 'node:assert/strict';"]
      : ["const { describe, it } = require('node:test');", "const assert = require('node:assert/strict');"],
  assert(call, assertion, awaited) {
    const actual = awaited ? `await ${call}` : call;
    switch (assertion.kind) {
      case 'equals':
        return [`assert.deepStrictEqual(${actual}, ${assertion.expected});`];
      case 'throws': {
        const ctor = ctorOf(assertion.error);
        const { message } = assertion.error;
        const run = awaited
          ? (m: string): string => `await assert.rejects(${call}, ${m});`
          : (m: string): string => `assert.throws(() => ${call}, ${m});`;
        const fields: string[] = [];
        // A global class is checked by name in the same call; another by identity, then the message.
        if (ctor && isGlobalError(ctor)) fields.push(`name: ${quote(ctor)}`);
        if (message !== undefined) fields.push(`message: ${quote(message)}`);
        const lines: string[] = [];
        if (ctor && !isGlobalError(ctor)) lines.push(run(ctor));
        if (fields.length > 0) lines.push(run(`{ ${fields.join(', ')} }`));
        if (lines.length === 0) lines.push(awaited ? `await assert.rejects(${call});` : `assert.throws(() => ${call});`);
        return lines;
      }
      case 'runs': {
        const check = assertion.check;
        if (!check) return awaited ? [`await assert.doesNotReject(${call});`] : [`assert.doesNotThrow(() => ${call});`];
        if (check.kind === 'array') return [`assert.ok(Array.isArray(${actual}));`];
        if (check.kind === 'instance') return [`assert.ok((${actual}) instanceof ${identifier(check.ctor)});`];
        if (check.names.length === 1) return [`assert.equal(typeof (${actual}), ${quote(check.names[0] as string)});`];
        return [`assert.ok([${check.names.map(quote).join(', ')}].includes(typeof (${actual})));`];
      }
    }
  },
};
