import { expect } from 'chai';
import { chunkFile } from '../../../services/rag/chunking/chunker.ts';
import { expectEveryLineCovered, lineOf, only, summary } from './helpers.ts';

const SOURCE = `import { readFile } from 'node:fs/promises';
import type { Db } from './db.ts';

const RETRIES = 3;

/**
 * Parses the status line of an HTTP response.
 * @param raw the first line, e.g. "HTTP/1.1 200 OK"
 */
export function parseStatusLine(raw: string): number {
  const [, code] = raw.split(' ');
  return Number(code);
}

/** Runs fn until it succeeds, at most RETRIES times. */
export const retry = async <T>(fn: () => Promise<T>): Promise<T> => {
  let last: unknown;
  for (let i = 0; i < RETRIES; i++) {
    try {
      return await fn();
    } catch (error) {
      last = error;
    }
  }
  throw last;
};

/** A person who can sign in. */
export interface User {
  id: string;
  name: string;
}

export type UserId = User['id'];

export enum Role {
  Admin,
  Member,
}

/** Keeps users in memory, keyed by id. */
export class UserStore {
  private readonly users = new Map<UserId, User>();

  constructor(private readonly db: Db) {}

  /** Finds a user by id, or undefined. */
  find(id: UserId): User | undefined {
    return this.users.get(id);
  }

  async save(user: User): Promise<void> {
    this.users.set(user.id, user);
    await readFile(user.name);
  }
}
`;

const PATH = 'src/users/store.ts';

describe('code chunker: TypeScript (unit)', () => {
  it('makes one chunk per top-level declaration, with its JSDoc, and merges imports and constants into a module chunk', async () => {
    const chunks = await chunkFile(PATH, SOURCE);
    expect(summary(chunks)).to.deep.equal([
      'module - 1-4',
      `function parseStatusLine ${lineOf(SOURCE, '/**')}-${lineOf(SOURCE, '}', lineOf(SOURCE, 'parseStatusLine'))}`,
      `function retry ${lineOf(SOURCE, 'Runs fn until')}-${lineOf(SOURCE, '};')}`,
      `interface User ${lineOf(SOURCE, 'A person')}-${lineOf(SOURCE, 'A person') + 4}`,
      `type UserId ${lineOf(SOURCE, 'export type')}-${lineOf(SOURCE, 'export type')}`,
      `enum Role ${lineOf(SOURCE, 'export enum')}-${lineOf(SOURCE, 'export enum') + 3}`,
      `class UserStore ${lineOf(SOURCE, 'Keeps users')}-${SOURCE.split('\n').length - 1}`,
    ]);
    for (const c of chunks) expect(c.language).to.equal('typescript');
  });

  it('keeps the JSDoc of a function and the exact text of its lines', async () => {
    const fn = only(await chunkFile(PATH, SOURCE), 'parseStatusLine');
    expect(fn.kind).to.equal('function');
    expect(fn.content.startsWith('/**\n * Parses the status line of an HTTP response.')).to.equal(true);
    expect(fn.content).to.equal(
      SOURCE.split('\n')
        .slice(fn.startLine - 1, fn.endLine)
        .join('\n'),
    );
    expect(fn.content.endsWith('return Number(code);\n}')).to.equal(true);
  });

  it('names an exported const arrow function as a function', async () => {
    const fn = only(await chunkFile(PATH, SOURCE), 'retry');
    expect(fn.kind).to.equal('function');
    expect(fn.content).to.match(/^\/\*\* Runs fn until it succeeds/);
    expect(fn.content).to.include('throw last;');
  });

  it('keeps a class that fits whole, methods included, in one chunk', async () => {
    const chunks = await chunkFile(PATH, SOURCE);
    expect(chunks.filter((c) => c.kind === 'method')).to.deep.equal([]);
    expect(only(chunks, 'UserStore').content).to.include('await readFile(user.name);');
  });

  it('gives a large class an outline chunk with member signatures and one chunk per method', async () => {
    const chunks = await chunkFile(PATH, SOURCE, { maxChars: 300 });
    const outline = chunks.filter((c) => c.kind === 'class');
    expect(outline).to.have.length(1);
    const [cls] = outline;
    expect(cls?.symbol).to.equal('UserStore');
    expect(cls?.content).to.include('export class UserStore {');
    expect(cls?.content).to.include('private readonly users = new Map<UserId, User>();');
    expect(cls?.content).to.include('find(id: UserId): User | undefined');
    expect(cls?.content).to.include('async save(user: User): Promise<void>');
    expect(cls?.content, 'bodies are in the method chunks').to.not.include('this.users.get(id)');

    const find = only(chunks, 'UserStore.find');
    expect(find.kind).to.equal('method');
    expect(find.content.split('\n')).to.deep.equal([
      '  /** Finds a user by id, or undefined. */',
      '  find(id: UserId): User | undefined {',
      '    return this.users.get(id);',
      '  }',
    ]);
    expect(find.startLine).to.equal(lineOf(SOURCE, 'Finds a user by id'));
    expect(only(chunks, 'UserStore.save').kind).to.equal('method');
    expect(only(chunks, 'UserStore.constructor').kind).to.equal('method');
    expectEveryLineCovered(SOURCE, chunks, 300);
  });

  it('attaches decorators, overload signatures and CommonJS assignments to the right function', async () => {
    const source = [
      '@Injectable()',
      'export class Api {}',
      '',
      '/** Formats a value. */',
      'export function format(value: string): string;',
      'export function format(value: number): string;',
      'export function format(value: unknown): string {',
      '  return String(value);',
      '}',
      '',
      'exports.handler = function (req, res) {',
      '  res.end();',
      '};',
      'Router.prototype.route = function route(path) {',
      '  return path;',
      '};',
    ].join('\n');
    const chunks = await chunkFile('src/api.ts', source);
    expect(summary(chunks)).to.deep.equal([
      'class Api 1-2',
      'function format 4-9',
      'function exports.handler 11-13',
      'method Router.route 14-16',
    ]);
  });

  it('names multi-line calls given a function (test suites, routes) after the callee and its label', async () => {
    const source = [
      "describe('user store', () => {",
      "  it('saves', () => {});",
      '});',
      "app.get('/users/:id', async (req, res) => {",
      '  res.json(await find(req.params.id));',
      '});',
      'run(() => 1);',
    ].join('\n');
    expect(summary(await chunkFile('test/store.spec.ts', source))).to.deep.equal([
      'function describe user store 1-3',
      'function app.get /users/:id 4-6',
      'module - 7-7',
    ]);
  });

  it('parses TSX and JavaScript with the same rules', async () => {
    const button = 'export const Button = ({ label }: { label: string }) => {\n  return <button>{label}</button>;\n};\n';
    const tsx = await chunkFile('ui/Button.tsx', button);
    expect(summary(tsx)).to.deep.equal(['function Button 1-3']);
    expect(tsx[0]?.language).to.equal('tsx');
    const js = await chunkFile('lib/app.mjs', 'export default function createApp() {\n  return {};\n}\n');
    expect(summary(js)).to.deep.equal(['function createApp 1-3']);
    expect(js[0]?.language).to.equal('javascript');
  });
});
