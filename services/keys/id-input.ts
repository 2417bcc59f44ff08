import { z } from 'zod';

/**
 * An identifier a caller names (a subscription, a customer): trimmed, 1-200 characters, no control
 * characters. A NUL reaches the database otherwise, and FerretDB's PostgreSQL storage fails the
 * lookup with a 500 where the caller deserves a 400 (found by the fuzz suite).
 */
export const identifier = (name: string) =>
  z
    .string({ error: `${name} is required` })
    .trim()
    .min(1, { error: `${name} is required` })
    .max(200, { error: `${name} is at most 200 characters` })
    .regex(/^[^\u0000-\u001f\u007f]+$/, { error: `${name} must not contain control characters` });
