import type { Admin } from 'kafkajs';
import type { Db } from 'mongodb';

export type HealthCheck = () => Promise<void>;

export interface HealthReport {
  status: 'ok' | 'unavailable';
  checks: Record<string, { ok: boolean; latencyMs: number; error?: string }>;
}

const withTimeout = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    p.then(
      (v) => (clearTimeout(t), resolve(v)),
      (e: unknown) => (clearTimeout(t), reject(e instanceof Error ? e : new Error(String(e)))),
    );
  });

export async function runHealthChecks(checks: Record<string, HealthCheck>, timeoutMs = 2000): Promise<HealthReport> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      const start = performance.now();
      try {
        await withTimeout(check(), timeoutMs, name);
        return [name, { ok: true, latencyMs: Math.round(performance.now() - start) }] as const;
      } catch (err) {
        return [name, { ok: false, latencyMs: Math.round(performance.now() - start), error: (err as Error).message }] as const;
      }
    }),
  );
  const result = Object.fromEntries(entries);
  return { status: entries.every(([, r]) => r.ok) ? 'ok' : 'unavailable', checks: result };
}

export const mongoCheck = (db: Db): HealthCheck => async () => {
  await db.command({ ping: 1 });
};

export const kafkaCheck = (admin: Admin): HealthCheck => async () => {
  await admin.describeCluster();
};
