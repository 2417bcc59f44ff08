import { notesAnswer, noteHitsAnswer, storedNoteAnswer } from '../../rag/memory/memory-answers.ts';
import { listNotesInput, searchNotesInput, storeNoteInput } from '../../rag/memory/memory-input.ts';
import { listNotes, searchNotes, storeNote } from '../../rag/memory/notes.ts';
import { defineTool, type Tool } from './tool.ts';

/** The team's shared memory as tools, so an assistant keeps and finds the team's context. Team keys only. */

const line = (n: { id: string; createdAt: string; tags: string[]; text: string }) =>
  `${n.id} (${n.createdAt}${n.tags.length > 0 ? `; ${n.tags.join(', ')}` : ''}): ${n.text}`;

export const memoryStoreTool = defineTool({
  name: 'memory_store',
  title: "Store a note in the team's shared memory",
  description:
    'Keeps a short note (a decision, a convention, where something lives) where every member of the team and their assistants can find it with memory_search. Team tier only.',
  input: storeNoteInput,
  output: storedNoteAnswer,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  run: (args, ctx) => storeNote(ctx.engine.deps, ctx.caller, args, ctx.correlationId),
  render: (r) => `stored note ${r.note.id}${r.searchable ? '' : ' (still being indexed: searchable in a moment)'}`,
});

export const memoryListTool = defineTool({
  name: 'memory_list',
  title: "List the team's notes",
  description: "The team's notes, newest first; pass the answer's next as before for older ones. Team tier only.",
  input: listNotesInput,
  output: notesAnswer,
  annotations: { readOnlyHint: true, openWorldHint: false },
  run: (args, ctx) => listNotes(ctx.engine.deps, ctx.caller, args),
  render: (r) =>
    r.notes.length === 0 ? 'no notes' : `${r.notes.map(line).join('\n')}${r.next ? `\n(older notes: before ${r.next})` : ''}`,
});

export const memorySearchTool = defineTool({
  name: 'memory_search',
  title: "Search the team's notes",
  description:
    "Finds the team's notes that answer a question, with the same retrieval as code (words and meaning). Each call counts one toward your queries quota. Team tier only.",
  input: searchNotesInput,
  output: noteHitsAnswer,
  annotations: { readOnlyHint: true, openWorldHint: false },
  run: (args, ctx) => searchNotes(ctx.engine.deps, ctx.caller, args, ctx.correlationId),
  render: (r) =>
    r.results.length === 0
      ? `no note found for "${r.query}"`
      : r.results.map((h, i) => `${i + 1}. ${line(h.note)} (score ${h.score.toFixed(3)})`).join('\n'),
});

export const MEMORY_TOOLS: readonly Tool[] = [memoryStoreTool, memoryListTool, memorySearchTool];
