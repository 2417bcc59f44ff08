/** A whole-number knob from the environment (BENCH_*), or its default; a bad value stops the bench with its name. */
export const intEnv = (name: string, fallback: number, min = 1): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
  return n;
};
