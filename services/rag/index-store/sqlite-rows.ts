/**
 * Typed reads of node:sqlite rows. A statement hands back `Record<string, SQLOutputValue>` whatever
 * its query selects, so each column is read with the type the schema gives it: the store needs no
 * cast, and a query that drifted from the schema fails here naming the column (never its value,
 * which may be a customer's code) instead of passing a wrong type further on.
 */

import type { SQLOutputValue } from 'node:sqlite';

export type SqliteRow = Readonly<Record<string, SQLOutputValue>>;

export class SqliteColumnError extends TypeError {
  constructor(column: string, expected: string, value: SQLOutputValue | undefined) {
    super(`column "${column}": expected ${expected}, got ${describe(value)}`);
    this.name = 'SqliteColumnError';
  }
}

/** A TEXT column that is NOT NULL. */
export function text(row: SqliteRow, column: string): string {
  const value = row[column];
  if (typeof value === 'string') return value;
  throw new SqliteColumnError(column, 'text', value);
}

/** A TEXT column that may be NULL. */
export function textOrNull(row: SqliteRow, column: string): string | null {
  const value = row[column];
  if (value === null || typeof value === 'string') return value;
  throw new SqliteColumnError(column, 'text or null', value);
}

/** An INTEGER column (a count, an id, a line): a safe integer, whether read as number or bigint. */
export function integer(row: SqliteRow, column: string): number {
  const value = row[column];
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'bigint' && value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)) {
    return Number(value);
  }
  throw new SqliteColumnError(column, 'a safe integer', value);
}

/** A REAL column, or an expression such as bm25() (an INTEGER result is a number too). */
export function real(row: SqliteRow, column: string): number {
  const value = row[column];
  if (typeof value === 'number') return value;
  throw new SqliteColumnError(column, 'a number', value);
}

/** A BLOB column that is NOT NULL. */
export function blob(row: SqliteRow, column: string): Uint8Array {
  const value = row[column];
  if (value instanceof Uint8Array) return value;
  throw new SqliteColumnError(column, 'a blob', value);
}

function describe(value: SQLOutputValue | undefined): string {
  if (value === undefined) return 'no such column';
  if (value === null) return 'null';
  if (value instanceof Uint8Array) return 'a blob';
  return typeof value;
}
