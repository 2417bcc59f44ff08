/**
 * A message that can never be handled as it is (bad bytes, a shape the decider cannot use, an
 * address the mail server refuses for good): it goes to the dead-letter topic at once, with the
 * reason, where ops can see it and re-drive it after a fix.
 */
export class PermanentError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentError';
  }
}

/** A message that cannot even be decoded or parsed. */
export class PoisonMessageError extends PermanentError {
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

export class TransientError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransientError';
  }
}

const TRANSIENT_NAMES = new Set([
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoServerSelectionError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'MongoWriteConcernError',
  'MongoOperationTimeoutError',
  'PoolClearedError',
  'PoolClearedOnNetworkError',
  'KafkaJSConnectionError',
  'KafkaJSNumberOfRetriesExceeded',
  'KafkaJSRequestTimeoutError',
  'KafkaJSNonRetriableError',
  'PublishError',
  'RateLimitStoreError',
]);

/**
 * Server answers that say "not now" rather than "not this": a primary stepping down or shutting
 * down, a write concern not met, a lock or time limit, a conflict with another writer. MongoDB's
 * own retryable-error list (the drivers' specification) plus the write-concern and timeout codes.
 */
const TRANSIENT_MONGO_CODES = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  24, // LockTimeout
  46, // LockBusy
  50, // MaxTimeMSExpired
  64, // WriteConcernFailed
  89, // NetworkTimeout
  91, // ShutdownInProgress
  112, // WriteConflict
  117, // ConflictingOperationInProgress
  133, // FailedToSatisfyReadPreference
  134, // ReadConcernMajorityNotAvailableYet
  189, // PrimarySteppedDown
  251, // NoSuchTransaction
  262, // ExceededTimeLimit
  9001, // SocketException
  10058, // LegacyNotPrimary
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
]);

const TRANSIENT_LABELS = ['RetryableWriteError', 'TransientTransactionError', 'ResetPool', 'PoolRequstedRetry', 'SystemOverloadedError'];

/** Socket-level failures of any client (SMTP, HTTP, database). */
const TRANSIENT_SYSTEM_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ECONNABORTED',
]);

interface ErrorShape {
  code?: unknown;
  errorLabels?: unknown;
  writeConcernError?: unknown;
  errorResponse?: { writeConcernError?: unknown };
}

function transientShape(err: Error): boolean {
  const e = err as Error & ErrorShape;
  if (typeof e.code === 'number' && err.name.startsWith('Mongo') && TRANSIENT_MONGO_CODES.has(e.code)) return true;
  if (typeof e.code === 'string' && TRANSIENT_SYSTEM_CODES.has(e.code)) return true;
  const labels = Array.isArray(e.errorLabels) ? (e.errorLabels as unknown[]) : [];
  if (labels.some((l) => typeof l === 'string' && TRANSIENT_LABELS.includes(l))) return true;
  // A bulk write whose documents were fine but whose write concern was not met.
  return err.name.startsWith('Mongo') && (e.writeConcernError !== undefined || e.errorResponse?.writeConcernError !== undefined);
}

/**
 * An outage of a dependency is not the message's fault: the consumer waits for it to come back
 * instead of sending healthy events to the dead-letter topic.
 */
export function isTransient(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof PermanentError) return false;
    if (current instanceof TransientError || TRANSIENT_NAMES.has(current.name) || TRANSIENT_NAMES.has(current.constructor.name))
      return true;
    if (transientShape(current)) return true;
    current = current.cause;
  }
  return false;
}

/** True when the message itself is at fault and retrying cannot help. */
export function isPermanent(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof PermanentError) return true;
    current = current.cause;
  }
  return false;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
