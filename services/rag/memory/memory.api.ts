import type { z } from 'zod';
import type { ApiOperation } from '../../platform/http/openapi.ts';
import { GATED, gateResponses } from '../../premium/premium-answers.ts';
import { notesAnswer, noteHitsAnswer, storedNoteAnswer } from './memory-answers.ts';
import { listNotesInput, searchNotesInput, storeNoteInput } from './memory-input.ts';
import { MEMORY_PATHS } from './memory.routes.ts';

/** The shared memory's routes in the vision RAG face's document. */
export const memoryOperations = (errorSchema: z.ZodType): ApiOperation[] => {
  const gate = gateResponses(errorSchema);
  const tags = ['memory'];
  const teamOnly = {
    description: 'Not a team key: shared memory is part of the team tier (or a refusal of the gate).',
    schema: errorSchema,
  };
  return [
    {
      method: 'post',
      path: MEMORY_PATHS.notes,
      summary: "Store a note in the team's shared memory",
      description: 'Answers once the note is indexed (searchable: true), or after 30 s with searchable: false while its index job goes on.',
      tags,
      security: GATED,
      body: { schema: storeNoteInput },
      responses: { 201: { description: 'The note.', schema: storedNoteAnswer }, ...gate, 403: teamOnly },
    },
    {
      method: 'get',
      path: MEMORY_PATHS.notes,
      summary: "The team's notes, newest first",
      tags,
      security: GATED,
      query: listNotesInput,
      responses: { 200: { description: 'A page of notes; next pages on.', schema: notesAnswer }, ...gate, 403: teamOnly },
    },
    {
      method: 'post',
      path: MEMORY_PATHS.search,
      summary: "Search the team's notes with the code retrieval",
      description: 'The same hybrid retrieval as code; one note per result, its best chunk as the excerpt. Uses one of queries.',
      tags,
      security: GATED,
      body: { schema: searchNotesInput },
      responses: { 200: { description: 'The best notes, best first.', schema: noteHitsAnswer }, ...gate, 403: teamOnly },
    },
  ];
};
