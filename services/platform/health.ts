import type { Admin } from 'kafkajs';
import type { Db } from 'mongodb';
import type { ConsumerHealth } from '../../events/consumer.ts';

export type HealthCheck = () => Promise<void>;

/**
 * What a process knows about its own health. Readiness (GET /health) asks everything: the
 * dependencies this face needs, the consumer groups of the process, and whether it is stopping.
 * Liveness (GET /health/live) asks nothing outside the process, so a Kafka or MongoDB outage makes
 * pods unready instead of restarting them all; it fails only for a consumer that crashed for good.
 */
export interface HealthSource {
  dependencies: Record<string, HealthCheck>;
  consumers: () => readonly ConsumerHealth[];
  stopping: () => boolean;
}

export interface CheckResult {
  ok: boolean;
  latencyMs: number;
  error?: string;
}

export interface HealthReport {
  status: 'ok' | 'unavailable';
  checks: Record<string, CheckResult>;
  consumers: ConsumerHealth[];
  stopping?: true;
}

const withTimeout = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    p.then(
      (v) => (clearTimeout(t), resolve(v)),
      (e: unknown) => (clearTimeout(t), reject(e instanceof Error ? e : new Error(String(e)))),
    );
  });

export async function runHealthChecks(checks: Record<string, HealthCheck>, timeoutMs = 2000): Promise<Record<string, CheckResult>> {
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
  return Object.fromEntries(entries);
}

export async function readiness(source: HealthSource): Promise<HealthReport> {
  const checks = await runHealthChecks(source.dependencies);
  const consumers = [...source.consumers()];
  const stopping = source.stopping();
  const ok = !stopping && Object.values(checks).every((c) => c.ok) && consumers.every((c) => c.ok);
  return { status: ok ? 'ok' : 'unavailable', checks, consumers, ...(stopping ? { stopping: true as const } : {}) };
}

export function liveness(source: HealthSource): { status: 'ok' | 'failed'; problems: string[] } {
  const problems = source
    .consumers()
    .filter((c) => c.state === 'crashed')
    .map((c) => `${c.group}: ${c.problem ?? 'crashed'}`);
  return { status: problems.length === 0 ? 'ok' : 'failed', problems };
}

/** The report without error texts and consumer problems: what an anonymous caller may see. */
export function withoutDetails(report: HealthReport): HealthReport {
  return {
    ...report,
    checks: Object.fromEntries(Object.entries(report.checks).map(([name, { ok, latencyMs }]) => [name, { ok, latencyMs }])),
    consumers: report.consumers.map(({ problem: _problem, ...rest }) => rest),
  };
}

export const mongoCheck =
  (db: Db): HealthCheck =>
  async () => {
    await db.command({ ping: 1 });
  };

export const kafkaCheck =
  (admin: Admin): HealthCheck =>
  async () => {
    await admin.describeCluster();
  };
