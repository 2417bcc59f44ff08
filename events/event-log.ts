/**
 * What events/ needs of a logger: structured lines and child loggers. It names no logging library;
 * the platform's pino logger satisfies it, and so would any other.
 */
export interface EventLog {
  child(bindings: Record<string, unknown>): EventLog;
  debug(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
}
