import { z } from 'zod';

export const noteAnswer = z.object({
  id: z.string(),
  text: z.string(),
  tags: z.array(z.string()),
  createdAt: z.string().describe('ISO 8601'),
  author: z
    .string()
    .describe(
      "who stored it: account:<userId> for a team member's own key, key:…<last four> for the team's key, operator; key:<12 hex> on notes stored before members were recorded",
    ),
  authorKey: z.string().nullable().describe('the last four of the key that stored it, as …abcd; null on older notes and an operator’s'),
});

export const storedNoteAnswer = z.object({ success: z.literal(true), note: noteAnswer, searchable: z.boolean() });
export const notesAnswer = z.object({
  success: z.literal(true),
  notes: z.array(noteAnswer),
  /** Pass as `before` for the next, older page; null on the last. */
  next: z.string().nullable(),
});
export const noteHitsAnswer = z.object({
  success: z.literal(true),
  query: z.string(),
  results: z.array(z.object({ note: noteAnswer, score: z.number(), excerpt: z.string() })),
});

export type NoteAnswer = z.output<typeof noteAnswer>;
export type StoredNoteAnswer = z.output<typeof storedNoteAnswer>;
export type NotesAnswer = z.output<typeof notesAnswer>;
export type NoteHitsAnswer = z.output<typeof noteHitsAnswer>;
