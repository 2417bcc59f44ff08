/**
 * Reads a judge prompt the way its system message says a model must: the data blocks fenced by the
 * request's token, and what stands outside them (the only text that may instruct the model).
 */

export interface PromptBlocks {
  inside: Array<{ label: string; content: string }>;
  outside: string;
}

/** The fence token the system message announces; throws when it announces none. */
export function boundaryOf(system: string): string {
  const token = /<<<END DATA ([^>\s]+)>>>/.exec(system)?.[1];
  if (!token) throw new Error(`the system message names no data boundary:\n${system}`);
  return token;
}

/** Throws on a block left open, a closing line without an opening one, or a block inside a block. */
export function blocksOf(user: string, boundary: string): PromptBlocks {
  const inside: PromptBlocks['inside'] = [];
  const outside: string[] = [];
  let open: { label: string; lines: string[] } | null = null;
  for (const line of user.split('\n')) {
    const start = line.startsWith(`<<<DATA ${boundary} `) && line.endsWith('>>>') ? line.slice(`<<<DATA ${boundary} `.length, -3) : null;
    const end = line === `<<<END DATA ${boundary}>>>`;
    if (start !== null) {
      if (open) throw new Error(`block "${start}" opens inside block "${open.label}"`);
      open = { label: start, lines: [] };
    } else if (end) {
      if (!open) throw new Error('a block closes that never opened');
      inside.push({ label: open.label, content: open.lines.join('\n') });
      open = null;
    } else if (open) open.lines.push(line);
    else outside.push(line);
  }
  if (open) throw new Error(`block "${open.label}" never closes`);
  return { inside, outside: outside.join('\n') };
}
