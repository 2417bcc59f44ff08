import { EventCatalog } from '../events/catalog.ts';
import type { Config } from '../services/platform/config.ts';
import type { Logger } from '../services/platform/logger.ts';
import { createRuntime, type Runtime, type RuntimeOptions } from '../services/platform/runtime.ts';
import { EVENT_DEFINITIONS } from './registry.ts';

/**
 * The catalog of every context's events, its topics named in the deployment's namespace
 * (KAFKA_TOPIC_PREFIX).
 */
export const eventCatalog = (topicPrefix = ''): EventCatalog => new EventCatalog(EVENT_DEFINITIONS, undefined, { topicPrefix });

/**
 * A runtime that serves every context's events: what the CLI's commands (and the tests and tools that
 * stand in for them) start. The kernel's `createRuntime` is told its catalog, because it does not
 * know the contexts.
 */
export const createAppRuntime = (config: Config, log: Logger, options: Omit<RuntimeOptions, 'catalog'> = {}): Promise<Runtime> =>
  createRuntime(config, log, { ...options, catalog: eventCatalog(config.kafka.topicPrefix) });
