/** A message that can never be handled as it is: it goes to the dead-letter topic at once. */
export class PoisonMessageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PoisonMessageError';
  }
}

/** Kafka did not acknowledge in time; ingress answers 503 and the caller retries. */
export class PublishError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PublishError';
  }
}

export class UnknownEventTypeError extends Error {
  constructor(type: string) {
    super(`event type "${type}" is not in the catalog`);
    this.name = 'UnknownEventTypeError';
  }
}

const TRANSIENT_NAMES = new Set([
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoServerSelectionError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'PoolClearedError',
  'KafkaJSConnectionError',
  'KafkaJSNumberOfRetriesExceeded',
  'KafkaJSRequestTimeoutError',
  'KafkaJSNonRetriableError',
  'PublishError',
  'RateLimitStoreError',
]);

/**
 * An outage of a dependency is not the message's fault: the consumer waits for it to come back
 * instead of sending healthy events to the dead-letter topic.
 */
export function isTransient(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof TransientError || TRANSIENT_NAMES.has(current.name) || TRANSIENT_NAMES.has(current.constructor.name)) return true;
    current = current.cause;
  }
  return false;
}

export class TransientError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransientError';
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
