import { z } from 'zod';
import { elementClue, MAX_CLUES } from './element-clues.ts';
import { CAPS } from './page-script.ts';
import { SEVERITIES, type AxeReport, type PageReport } from './types.ts';

/**
 * Validation of what the page's scripts hand back. The page can replace any DOM API our script uses,
 * so every field is checked, every string cut and every list capped here; an item of the wrong shape
 * is dropped rather than spoiling the rest. Also used for a stored report read back later.
 */

const LIMIT = 1_000_000; // CSS pixels: beyond any real layout, so a lie cannot make boxes huge

const num = z
  .number()
  .refine(Number.isFinite)
  .transform((v) => Math.max(-LIMIT, Math.min(LIMIT, Math.round(v * 100) / 100)));
const size = num.transform((v) => Math.max(0, v));
const str = (max: number) => z.string().transform((s) => s.slice(0, max));
const box = z.object({ x: num, y: num, width: size, height: size });

/** A list cut to `cap` before its items are parsed (so a huge list costs nothing), bad items dropped. */
function list<T extends z.ZodType>(item: T, cap: number) {
  return z.unknown().transform((raw): z.output<T>[] => {
    if (!Array.isArray(raw)) return [];
    const out: z.output<T>[] = [];
    for (const value of raw.slice(0, cap)) {
      const parsed = item.safeParse(value);
      if (parsed.success) out.push(parsed.data);
    }
    return out;
  });
}

const placed = { selector: str(300), tag: str(40), box };

const interactive = z.object({
  ...placed,
  index: z.number().int().min(0),
  role: str(40),
  roleSource: z.enum(['explicit', 'implicit']),
  name: str(200),
  nameSource: z.enum(['aria-labelledby', 'aria-label', 'label', 'alt', 'title', 'content', 'placeholder', 'value', 'none']),
  visible: z.boolean(),
  disabled: z.boolean(),
  within: list(z.number().int().min(0), 50),
  inline: z.boolean(),
  userAgentSized: z.boolean(),
  rects: list(box, 4).optional(),
});

const image = z.object({
  ...placed,
  src: str(300),
  alt: str(300).nullable(),
  complete: z.boolean(),
  naturalWidth: size,
  naturalHeight: size,
  visible: z.boolean(),
  decodeFailed: z.boolean(),
});

const textIssue = z.object({
  ...placed,
  kind: z.enum(['clipped', 'overflow']),
  text: str(120),
  containerSelector: str(300),
  containerBox: box,
  overflowPx: size,
  axis: z.enum(['x', 'y', 'both']),
});

const offScreen = z.object({ ...placed, revealsOnFocus: z.boolean(), text: str(120) });

const siblingGroup = z.object({
  parentSelector: str(300),
  direction: z.enum(['column', 'row']),
  alignItems: str(40),
  textDirection: z.enum(['ltr', 'rtl']),
  children: list(z.object(placed), CAPS.groupChildren),
});

const probe = z.object({
  selector: str(1000),
  exists: z.boolean(),
  count: z.number().int().min(0),
  visible: z.boolean(),
  text: str(300),
  box: box.optional(),
  error: str(200).optional(),
});

const axeNode = z.object({ target: str(300), html: str(300), failureSummary: str(500), box: box.optional() });

const axeViolation = z.object({
  id: str(80),
  // axe reports a null impact only for results that are not violations; treat one as moderate.
  impact: z
    .enum(SEVERITIES)
    .nullable()
    .transform((v) => v ?? 'moderate'),
  description: str(300),
  help: str(300),
  helpUrl: str(300),
  nodeCount: z.number().int().min(0),
  nodes: list(axeNode, CAPS.axeNodes),
});

const axeReport = z.object({
  version: str(40).nullable(),
  error: str(300).optional(),
  violations: list(axeViolation, CAPS.axeViolations),
  contrastChecked: z.boolean(),
  contrastIncomplete: z.number().int().min(0),
});

const viewport = z.object({ width: size, height: size });

const pageFacts = z.object({
  url: str(2000),
  viewport,
  document: viewport,
  interactive: list(interactive, CAPS.interactive),
  images: list(image, CAPS.images),
  textIssues: list(textIssue, CAPS.textIssues),
  wideElements: list(z.object(placed), CAPS.wideElements),
  offScreen: list(offScreen, CAPS.offScreen),
  siblingGroups: list(siblingGroup, CAPS.siblingGroups),
  probes: list(probe, CAPS.probes),
  truncated: z.record(z.string().max(40), z.number().int().min(0)).catch({}),
  errors: list(str(300), 20),
});

/** Facts from the page script (everything but axe): throws when the shape is not a report at all. */
export function parsePageFacts(raw: unknown): Omit<PageReport, 'version' | 'axe'> {
  return pageFacts.parse(raw);
}

export function parseAxeReport(raw: unknown): AxeReport {
  return axeReport.parse(raw);
}

/** A stored report, read back: the same checks, and the version this code understands. */
export function parsePageReport(raw: unknown): PageReport {
  return pageFacts.extend({ version: z.literal(1), axe: axeReport, clues: list(elementClue, MAX_CLUES).optional() }).parse(raw);
}
