/** Tasks for the work pool's tests: each does one thing a customer's input could make a task do. */

export async function echo(input: { value: string }): Promise<string> {
  return input.value;
}

/** Never ends by itself (a regex that backtracks without end looks the same to the pool). */
export async function spin(): Promise<never> {
  for (;;) {
    // a busy loop with no await: only ending the thread stops it
  }
}

/** Grows its heap until the budget stops it. */
export async function hog(): Promise<number> {
  const held: number[][] = [];
  for (;;) held.push(new Array(1 << 20).fill(held.length));
}

export async function refuse(input: { reason: string }): Promise<never> {
  const err = new Error(input.reason) as Error & { code: string };
  err.name = 'RefusedInput';
  err.code = 'REFUSED';
  throw err;
}

/** Backtracks exponentially in V8's regex engine: stopped only by ending the thread. */
export async function backtrack(input: { length: number }): Promise<boolean> {
  return /^(a+)+b$/.test('a'.repeat(input.length));
}
