import type { BoundedContext } from '../platform/context.ts';
import { analysesProjection } from './analyses.projection.ts';
import { baselinesProjection } from './baselines.projection.ts';
import { VISION_EVENTS } from './events.ts';
import { screenshotsProjection } from './screenshots.projection.ts';
import { snapshotReviewsProjection } from './snapshot-reviews.projection.ts';
import { testRunsProjection } from './test-runs.projection.ts';

/**
 * Page capture, analysis and visual tests. No service of its own: its operations are served by the
 * rag service (/api/glm/*) and the MCP server (glm_* tools), over one browser pool per process.
 */
export const visionContext: BoundedContext = {
  name: 'vision',
  events: VISION_EVENTS,
  projections: [screenshotsProjection, baselinesProjection, testRunsProjection, analysesProjection, snapshotReviewsProjection],
  services: [],
};
