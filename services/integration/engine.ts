import { Parts } from '../platform/parts.ts';
import type { Runtime } from '../platform/runtime.ts';
import { sharedPerRuntime, type Lease } from '../platform/shared-per-runtime.ts';
import { startProjection } from '../platform/wiring.ts';
import { leaseRagEngine } from '../rag/engine.ts';
import { leaseVisionEngine } from '../vision/engine.ts';
import type { IntegrationDeps } from './app/deps.ts';
import { generationPool } from './generate/unit/generation-pool.ts';
import { generationsProjection } from './generations.projection.ts';
import { validationsProjection } from './validations.projection.ts';

/**
 * The integration operations of a process: the retrieval engine and the browser it shares with the
 * other faces (leased, not started again), the integration projections, and the worker thread that
 * generates unit tests (ended on stop, with what waits for it).
 */
export const leaseIntegrationEngine: (rt: Runtime) => Promise<Lease<IntegrationDeps>> = sharedPerRuntime(async (rt) => {
  const log = rt.log.child({ service: 'integration' });
  const parts = new Parts();
  const deps = await parts.starting(async () => {
    const rag = await leaseRagEngine(rt);
    parts.onStop(() => rag.release());
    const vision = await leaseVisionEngine(rt);
    parts.onStop(() => vision.release());
    const generation = generationPool();
    parts.onStop(() => generation.close());
    for (const projection of [validationsProjection, generationsProjection]) parts.add(await startProjection(rt, log, projection));
    return { rag: rag.value.deps, vision: vision.value.deps, llm: rt.config.llm, generation };
  });
  return { value: deps, stop: () => parts.stopAll((err) => log.error({ err }, 'integration engine: stop failed')) };
});
