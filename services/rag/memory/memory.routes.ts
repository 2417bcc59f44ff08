import type { Express } from 'express';
import type { KeyGate } from '../../keys/gate.ts';
import { admitter, callerOf, parse } from '../../premium/gated-request.ts';
import type { RagDeps } from '../app/deps.ts';
import { listNotesInput, searchNotesInput, storeNoteInput } from './memory-input.ts';
import { listNotes, searchNotes, storeNote } from './notes.ts';

export const MEMORY_PATHS = {
  notes: '/api/memory/notes',
  search: '/api/memory/search',
} as const;

/**
 * The shared memory over HTTP, behind the gate like every premium route: store a note (201, once it
 * is searchable), list them newest first, search them. Team keys only (403 otherwise).
 */
export function mountMemoryRoutes(app: Express, deps: RagDeps, gate: KeyGate): void {
  const admit = admitter(gate);

  app.post(MEMORY_PATHS.notes, async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    res.status(201).json(await storeNote(deps, callerOf(admitted), parse(storeNoteInput, req.body), req.id));
  });

  app.get(MEMORY_PATHS.notes, async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    res.json(await listNotes(deps, callerOf(admitted), parse(listNotesInput, req.query)));
  });

  app.post(MEMORY_PATHS.search, async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    res.json(await searchNotes(deps, callerOf(admitted), parse(searchNotesInput, req.body), req.id));
  });
}
