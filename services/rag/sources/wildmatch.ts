/**
 * The glob matching behind `.gitignore` rules (see gitignore.ts for the syntax), compiled to a small
 * NFA and run as a set of states over the subject, one code point at a time. A translation to a
 * JavaScript RegExp backtracks exponentially on patterns like `*a*a*a*a*a*a*a*a*b` (one pushed
 * `.gitignore` froze the whole process); here each step touches every state at most once, so one
 * match costs at most (pattern length + 1) × subject length steps, whatever the pattern.
 */

/** Tests one subject: a path relative to the rule's directory (anchored) or a single name. */
export type Wildmatch = (subject: string) => boolean;

// State kinds. Epsilon moves only go forward, so following them from a state never loops.
const LITERAL = 0; // one given code point, then the next state
const ONE = 1; // `?`: one code point other than `/`
const CLASS = 2; // `[...]`: one code point in the class (never `/`)
const STAR = 3; // `*`: stay on any code point other than `/`; epsilon to the next state
const ANY_STAR = 4; // `.*` of a lone `**`: stay on anything; epsilon to the next state
const ANY_ONE = 5; // one code point, `/` included
const DIRS = 6; // `**/`: epsilon to DIRS_BODY and past it (zero directories)
const DIRS_BODY = 7; // stay on anything, or leave on a `/`

const SLASH = 0x2f;

type Ranges = readonly number[]; // inclusive [from, to] pairs

interface Nfa {
  readonly kinds: number[];
  /** the code point of a LITERAL state */
  readonly codes: number[];
  /** the class of a CLASS state */
  readonly classes: Array<{ readonly ranges: Ranges; readonly negated: boolean } | undefined>;
}

const POSIX_CLASSES: Record<string, Ranges> = {
  alnum: [0x61, 0x7a, 0x41, 0x5a, 0x30, 0x39],
  alpha: [0x61, 0x7a, 0x41, 0x5a],
  blank: [0x20, 0x20, 0x09, 0x09],
  cntrl: [0x00, 0x1f, 0x7f, 0x7f],
  digit: [0x30, 0x39],
  graph: [0x21, 0x7e],
  lower: [0x61, 0x7a],
  print: [0x20, 0x7e],
  punct: [0x21, 0x2f, 0x3a, 0x40, 0x5b, 0x60, 0x7b, 0x7e],
  space: [0x20, 0x20, 0x09, 0x0d],
  upper: [0x41, 0x5a],
  xdigit: [0x30, 0x39, 0x61, 0x66, 0x41, 0x46],
};

/**
 * Compiles a pattern (negation, trailing `/` and leading `/` already taken off). `anchored`: the
 * pattern is matched against the whole relative path and its `**` segments may cross directories;
 * otherwise it is one name. Undefined for a pattern git never matches (an unclosed `[`, an unknown
 * `[:class:]`, a trailing `\`).
 */
export function compileWildmatch(pattern: string, anchored: boolean): Wildmatch | undefined {
  const nfa: Nfa = { kinds: [], codes: [], classes: [] };
  if (!anchored) {
    if (!compileSegment(nfa, pattern)) return undefined;
    return matcherOf(nfa);
  }
  const segments = pattern.split('/');
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i] as string;
    const last = i === segments.length - 1;
    if (segment === '**') {
      // `a/**` is everything inside a (at least one character); a pattern that is only `**`
      // matches anything; `**/b` and `a/**/b` allow zero or more directories.
      if (last && i === 0) {
        push(nfa, ANY_STAR);
      } else if (last) {
        push(nfa, ANY_ONE);
        push(nfa, ANY_STAR);
      } else {
        push(nfa, DIRS);
        push(nfa, DIRS_BODY);
      }
      continue;
    }
    if (!compileSegment(nfa, segment)) return undefined;
    if (!last) push(nfa, LITERAL, SLASH);
  }
  return matcherOf(nfa);
}

function push(nfa: Nfa, kind: number, code = -1, cls?: { ranges: Ranges; negated: boolean }): void {
  nfa.kinds.push(kind);
  nfa.codes.push(code);
  nfa.classes.push(cls);
}

/** One path segment (no `/`): `*` (a run of them is one), `?`, classes, escapes. False when git would never match. */
function compileSegment(nfa: Nfa, segment: string): boolean {
  const cps = codePoints(segment);
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i] as number;
    if (c === 0x2a /* * */) {
      while (cps[i + 1] === 0x2a) i++;
      push(nfa, STAR);
    } else if (c === 0x3f /* ? */) {
      push(nfa, ONE);
    } else if (c === 0x5b /* [ */) {
      const parsed = characterClass(cps, i);
      if (!parsed) return false;
      push(nfa, CLASS, -1, parsed.cls);
      i = parsed.end;
    } else if (c === 0x5c /* \ */) {
      const next = cps[i + 1];
      if (next === undefined) return false;
      push(nfa, LITERAL, next);
      i++;
    } else {
      push(nfa, LITERAL, c);
    }
  }
  return true;
}

/** `[...]` starting at `start`: the class and the index of its closing `]`, or undefined when it never closes. */
function characterClass(cps: readonly number[], start: number): { cls: { ranges: Ranges; negated: boolean }; end: number } | undefined {
  let i = start + 1;
  let negated = false;
  if (cps[i] === 0x21 /* ! */ || cps[i] === 0x5e /* ^ */) {
    negated = true;
    i++;
  }
  const ranges: number[] = [];
  let first = true;
  for (; i < cps.length; i++) {
    const c = cps[i] as number;
    // A `]` first in the class is a member, not its end.
    if (c === 0x5d && !first) return { cls: { ranges, negated }, end: i };
    first = false;
    if (c === 0x5b && cps[i + 1] === 0x3a /* [: */) {
      const close = indexOfClassEnd(cps, i + 2);
      const posix = close === -1 ? undefined : POSIX_CLASSES[stringOf(cps.slice(i + 2, close))];
      if (posix === undefined) return undefined;
      ranges.push(...posix);
      i = close + 1;
      continue;
    }
    let from = c;
    if (c === 0x5c) {
      const next = cps[i + 1];
      if (next === undefined) return undefined;
      from = next;
      i++;
    }
    const after = cps[i + 2];
    if (cps[i + 1] === 0x2d /* - */ && after !== undefined && after !== 0x5d) {
      let to = after;
      let skip = 2;
      if (to === 0x5c) {
        const next = cps[i + 3];
        if (next === undefined) return undefined;
        to = next;
        skip = 3;
      }
      // A reversed range matches nothing, as in git.
      if (to >= from) ranges.push(from, to);
      i += skip;
      continue;
    }
    ranges.push(from, from);
  }
  return undefined;
}

function indexOfClassEnd(cps: readonly number[], from: number): number {
  for (let i = from; i + 1 < cps.length; i++) if (cps[i] === 0x3a && cps[i + 1] === 0x5d) return i;
  return -1;
}

function codePoints(text: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.codePointAt(i) as number;
    out.push(c);
    if (c > 0xffff) i++;
  }
  return out;
}

function stringOf(cps: readonly number[]): string {
  let out = '';
  for (const c of cps) out += String.fromCodePoint(c);
  return out;
}

function matcherOf(nfa: Nfa): Wildmatch {
  const { kinds, codes, classes } = nfa;
  const size = kinds.length;
  if (kinds.every((k) => k === LITERAL)) {
    const literal = stringOf(codes);
    return (subject) => subject === literal;
  }
  // Quick rejection, since most subjects fail most rules: literals that must open or close the
  // subject (a pattern starts or ends with them and nothing optional stands before or after).
  let head = 0;
  while (kinds[head] === LITERAL) head++;
  let tail = size;
  while (kinds[tail - 1] === LITERAL) tail--;
  const prefix = stringOf(codes.slice(0, head));
  const suffix = stringOf(codes.slice(tail));

  return (subject) => {
    if (!subject.startsWith(prefix) || !subject.endsWith(suffix)) return false;
    const scratch = scratchFor(size + 1);
    const { mark } = scratch;
    let current = scratch.a;
    let next = scratch.b;
    let stamp = nextStamp();
    let count = 0;
    // Adds state `k` and whatever its epsilon moves reach to the set being built.
    const add = (k: number): void => {
      while (k <= size && mark[k] !== stamp) {
        mark[k] = stamp;
        next[count++] = k;
        const kind = kinds[k];
        if (kind === STAR || kind === ANY_STAR) {
          k++;
        } else if (kind === DIRS) {
          if (mark[k + 1] !== stamp) {
            mark[k + 1] = stamp;
            next[count++] = k + 1;
          }
          k += 2;
        } else {
          return;
        }
      }
    };
    add(0);
    for (let i = 0; i < subject.length; i++) {
      const c = subject.codePointAt(i) as number;
      if (c > 0xffff) i++;
      const built = next;
      next = current;
      current = built;
      const active = count;
      count = 0;
      stamp = nextStamp();
      for (let j = 0; j < active; j++) {
        const k = current[j] as number;
        switch (kinds[k]) {
          case LITERAL:
            if (c === codes[k]) add(k + 1);
            break;
          case ONE:
            if (c !== SLASH) add(k + 1);
            break;
          case CLASS:
            if (c !== SLASH && inClass(classes[k] as { ranges: Ranges; negated: boolean }, c)) add(k + 1);
            break;
          case STAR:
            if (c !== SLASH) add(k);
            break;
          case ANY_STAR:
            add(k);
            break;
          case ANY_ONE:
            add(k + 1);
            break;
          case DIRS_BODY:
            add(k);
            if (c === SLASH) add(k + 1);
            break;
          default:
            break; // DIRS consumes nothing; the final state has no moves
        }
      }
      if (count === 0) return false;
    }
    return mark[size] === stamp;
  };
}

function inClass(cls: { ranges: Ranges; negated: boolean }, c: number): boolean {
  const { ranges } = cls;
  for (let r = 0; r < ranges.length; r += 2) {
    if (c >= (ranges[r] as number) && c <= (ranges[r + 1] as number)) return !cls.negated;
  }
  return cls.negated;
}

// One set of buffers for every matcher: matching is synchronous and never re-entered, and a buffer
// per rule would cost memory in proportion to the rules' total length.
let shared = { mark: new Int32Array(64), a: new Int32Array(64), b: new Int32Array(64) };
let stampCounter = 0;

function scratchFor(states: number): typeof shared {
  if (shared.mark.length < states) {
    const length = Math.max(states, shared.mark.length * 2);
    shared = { mark: new Int32Array(length), a: new Int32Array(length), b: new Int32Array(length) };
    stampCounter = 0;
  }
  return shared;
}

function nextStamp(): number {
  if (stampCounter === 0x7fffffff) {
    shared.mark.fill(0);
    stampCounter = 0;
  }
  return ++stampCounter;
}
