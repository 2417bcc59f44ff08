import { z } from 'zod';

/** The shared memory's requests. Notes are short: context for an assistant, not documents. */

export const NOTE_MAX_CHARS = 4000;

const tag = z.string().regex(/^[a-z0-9][a-z0-9-]{0,31}$/, { error: 'a tag is 1-32 of a-z 0-9 -, starting with a letter or digit' });

export const storeNoteInput = z.object({
  text: z
    .string({ error: 'text is required' })
    .trim()
    .min(1, { error: 'text is required' })
    .max(NOTE_MAX_CHARS, { error: `a note is at most ${NOTE_MAX_CHARS} characters` })
    .describe('The note: a decision, a convention, where something lives, what to avoid.'),
  tags: z.array(tag).max(8, { error: 'at most 8 tags' }).default([]).describe('Words to find it by, such as billing or onboarding.'),
});

export const listNotesInput = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20).describe('How many notes, 1-100.'),
  before: z
    .string()
    .regex(/^n[0-9a-z]{8,16}-[0-9a-f]{8}$/, { error: 'before must be a note id' })
    .optional()
    .describe('The next of the page before: notes older than it (newest first).'),
});

export const searchNotesInput = z.object({
  query: z
    .string({ error: 'query is required' })
    .trim()
    .min(1, { error: 'query is required' })
    .max(2000, { error: 'query is at most 2000 characters' })
    .describe('What to find, in words: "how do we name feature flags?"'),
  topK: z.coerce.number().int().min(1).max(20).default(5).describe('How many notes, 1-20.'),
});

export type StoreNoteInput = z.infer<typeof storeNoteInput>;
export type ListNotesInput = z.infer<typeof listNotesInput>;
export type SearchNotesInput = z.infer<typeof searchNotesInput>;
