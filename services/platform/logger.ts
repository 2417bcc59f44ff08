import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Structured JSON logs. Redaction is the second line of defence: code must not log secrets in the
 * first place, but a stray request object or header bag must not leak one either.
 */
export const REDACTED_PATHS = [
  'password',
  '*.password',
  'apiKey',
  '*.apiKey',
  'token',
  '*.token',
  'secret',
  '*.secret',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'headers["x-api-key"]',
  'headers["x-signature"]',
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers["x-signature"]',
  'req.headers.cookie',
];

let root: Logger | undefined;

export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    level,
    // `service` is bound by each service's child logger; pino does not merge a key bound twice, so the
    // root names the system under its own key.
    base: { system: 'svc' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    formatters: { level: (label) => ({ level: label }) },
  });
}

export function logger(): Logger {
  root ??= createLogger();
  return root;
}

export function setRootLogger(l: Logger): void {
  root = l;
}
