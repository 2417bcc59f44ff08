/** `p`, or a rejection naming what was not done (`what()` is read when the time is up) after `ms`. */
export function withTimeout<T>(what: () => string, p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what()} within ${ms / 1000}s`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
