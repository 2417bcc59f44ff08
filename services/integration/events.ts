import { defineEvent, type EventDefinition } from '../../events/catalog.ts';
import type { Event } from '../../events/envelope.ts';

export const INTEGRATION_TOPIC = 'integration.events';

export type TestType = 'unit' | 'integration' | 'e2e' | 'visual';
export type Coverage = 'basic' | 'comprehensive' | 'exhaustive';

export interface ValidationCompletedData {
  validationId: string;
  customerId: string;
  keyHash: string | null;
  component: string;
  collectionName: string | null;
  url: string | null;
  /**
   * On the evidence only. true: every check passed; false: one failed; null: none failed and one
   * could not be decided (a check only the language model decided counts as undecided, and so do
   * the counts in checks).
   */
  valid: boolean | null;
  confidence: number;
  checks: { passed: number; failed: number; unknown: number };
  /** Checks the configured language model decided (0 without one). */
  judgedByModel: number;
  codeEvidence: number;
  pageEvidence: number;
  durationMs: number;
}

export interface TestsGeneratedData {
  generationId: string;
  customerId: string;
  keyHash: string | null;
  component: string;
  collectionName: string | null;
  url: string | null;
  testType: TestType;
  coverage: Coverage;
  framework: string;
  files: number;
  cases: number;
  durationMs: number;
}

export type ValidationCompleted = Event<'integration.validation-completed', ValidationCompletedData>;
export type TestsGenerated = Event<'integration.tests-generated', TestsGeneratedData>;

export type IntegrationEvent = ValidationCompleted | TestsGenerated;

export const INTEGRATION_EVENT_TYPES = [
  'integration.validation-completed',
  'integration.tests-generated',
] as const satisfies readonly IntegrationEvent['type'][];

/** A customer's integration events stay ordered. */
export const INTEGRATION_EVENTS: readonly EventDefinition[] = INTEGRATION_EVENT_TYPES.map((type) =>
  defineEvent<IntegrationEvent>({ type, topic: INTEGRATION_TOPIC, schema: `integration/${type}`, key: (d) => d.customerId }),
);
