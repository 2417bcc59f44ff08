import { BoundedCounter } from '../platform/metrics.ts';
import { CAPTURE_ERROR_CODES } from './browser/capture-error.ts';
import type { CaptureSource } from './events.ts';

const SOURCES = ['capture', 'analyze', 'test', 'image'] as const satisfies readonly CaptureSource[];

/** What vision counts for the dashboard and alerts (deploy/grafana, deploy/prometheus). */
export const visionMetrics = {
  captures: new BoundedCounter({
    name: 'svc_vision_captures_total',
    help: 'Page captures by what asked for them and how they ended: captured, a capture error code (BLOCKED_URL, TIMEOUT, POOL_BUSY, ...), or error',
    labels: { source: SOURCES, outcome: ['captured', ...CAPTURE_ERROR_CODES, 'error'] as const },
  }),
};
