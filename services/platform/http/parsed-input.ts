import type { z } from 'zod';
import { badRequest } from './errors.ts';

/** A body or query as typed input, or a 400 naming the first field that is wrong and why. */
export function parsedInput<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw badRequest(issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'invalid request');
}
