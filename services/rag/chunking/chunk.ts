/**
 * What the chunkers produce and the knobs they share. Line numbers are 1-based and inclusive,
 * as an editor shows them, because the index store hands them back to people and to editors.
 */

export const CHUNK_KINDS = ['function', 'class', 'method', 'interface', 'type', 'enum', 'variable', 'module', 'section', 'text'] as const;

/**
 * `variable` is the one kind beyond the usual set: a named top-level constant large enough to stand
 * alone (a route table, a config object) is searched for by its name like a function is.
 */
export type ChunkKind = (typeof CHUNK_KINDS)[number];

export interface ChunkPart {
  /** 1-based */
  index: number;
  count: number;
}

export interface Chunk {
  content: string;
  startLine: number;
  endLine: number;
  kind: ChunkKind;
  /** `name`, `Class.method`, or a heading path `Install > Linux` */
  symbol?: string;
  language: string;
  /** present when one declaration or section was too large and was cut into windows */
  part?: ChunkPart;
}

export interface ChunkOptions {
  /** hard cap on `content.length`; a single longer line is cut into pieces */
  maxChars: number;
  /** lines per window in the plain-text fallback */
  windowLines: number;
  /** lines shared by consecutive fallback windows */
  windowOverlap: number;
  /** lines shared by consecutive windows of one oversized declaration or section */
  splitOverlap: number;
  /** a named top-level constant spanning fewer lines than this is merged into a module chunk */
  minVariableLines: number;
  /** larger files are windowed without parsing (generated or vendored code, minified bundles) */
  maxParseChars: number;
  /** a parse whose top-level ERROR nodes cover more than this share of the lines is not trusted */
  maxErrorShare: number;
}

/**
 * 3000 characters is about 800 tokens of code: whole typical functions fit, and so does the
 * input window of the small embedding models the index uses; larger models can take more.
 */
export const DEFAULT_CHUNK_OPTIONS: Readonly<ChunkOptions> = Object.freeze({
  maxChars: 3000,
  windowLines: 60,
  windowOverlap: 10,
  splitOverlap: 3,
  minVariableLines: 6,
  maxParseChars: 1_000_000,
  maxErrorShare: 0.3,
});

export function resolveOptions(options: Partial<ChunkOptions> = {}): ChunkOptions {
  const o = { ...DEFAULT_CHUNK_OPTIONS, ...options };
  if (!(o.maxChars >= 80)) throw new RangeError(`maxChars must be at least 80, got ${o.maxChars}`);
  if (!(o.windowLines >= 1)) throw new RangeError(`windowLines must be at least 1, got ${o.windowLines}`);
  if (!(o.windowOverlap >= 0 && o.windowOverlap < o.windowLines))
    throw new RangeError(`windowOverlap must be in [0, windowLines), got ${o.windowOverlap}`);
  if (!(o.splitOverlap >= 0)) throw new RangeError(`splitOverlap must be >= 0, got ${o.splitOverlap}`);
  return o;
}
