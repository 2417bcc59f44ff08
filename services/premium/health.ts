import type { Express } from 'express';
import { readiness, type HealthReport, type HealthSource } from '../platform/health.ts';

export interface RagFeatures {
  rag: boolean;
  glmVision: boolean;
  contextAware: boolean;
  autoGenerate: boolean;
}

/**
 * What works in this deployment, asked at each answer: retrieval (its model loaded; answers then come
 * from the customer's own code, hence contextAware), vision (a browser is installed), and test
 * generation (autoGenerate: from the indexed code, so it works when retrieval does).
 */
export const featuresOf = (rag: { retrievalReady(): boolean }, vision: { ready(): boolean }) => (): RagFeatures => {
  const retrieval = rag.retrievalReady();
  return { rag: retrieval, glmVision: vision.ready(), contextAware: retrieval, autoGenerate: retrieval };
};

export interface RagHealthOptions {
  /** Named in every answer (`svc-rag`, `svc-mcp`). */
  service: string;
  health: HealthSource;
  version: string;
  environment: string;
  /** What really works in this deployment, asked at each answer. */
  features: () => RagFeatures;
  /** How often dependencies are probed; an answer never waits on a slow broker. */
  probeEveryMs?: number;
}

export interface RagHealthReport {
  status: 'healthy' | 'degraded' | 'unhealthy';
  service: string;
  version: string;
  environment: string;
  timestamp: string;
  features: RagFeatures;
}

/**
 * The vision RAG side's health in the shape its specification gives: healthy, degraded (up, but a
 * feature does not work here) or unhealthy (a dependency or a consumer is down, or the service is
 * stopping). Dependencies are probed in the background, so an answer takes well under 100 ms; the
 * HTTP route and the `health_check` tool answer from the same probe.
 */
export class RagHealth {
  readonly #options: RagHealthOptions;
  readonly #timer: NodeJS.Timeout;
  #last: HealthReport | undefined;
  #probing = false;

  constructor(options: RagHealthOptions) {
    this.#options = options;
    this.#probe();
    this.#timer = setInterval(() => this.#probe(), options.probeEveryMs ?? 2000);
    this.#timer.unref();
  }

  report(): RagHealthReport {
    const features = this.#options.features();
    const ready = this.#last?.status === 'ok' && !this.#options.health.stopping();
    return {
      status: !ready ? 'unhealthy' : features.rag ? 'healthy' : 'degraded',
      service: this.#options.service,
      version: this.#options.version,
      environment: this.#options.environment,
      timestamp: new Date().toISOString(),
      features,
    };
  }

  /** GET /health: 200 healthy or degraded, 503 unhealthy. */
  readonly mount = (app: Express): void => {
    app.get('/health', (_req, res) => {
      const report = this.report();
      res.setHeader('Cache-Control', 'no-store');
      res.status(report.status === 'unhealthy' ? 503 : 200).json(report);
    });
  };

  stop(): void {
    clearInterval(this.#timer);
  }

  #probe(): void {
    if (this.#probing) return;
    this.#probing = true;
    readiness(this.#options.health)
      .then((report) => (this.#last = report))
      .catch(() => undefined)
      .finally(() => (this.#probing = false));
  }
}
