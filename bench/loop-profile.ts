import { readFileSync } from 'node:fs';

/**
 * Where a server's event loop went while a paced load ran: a V8 CPU profile (`.cpuprofile`, as
 * node:inspector's Profiler.stop or `node --cpu-prof` writes it) cut into busy stretches, each
 * sample named by the source that owns its stack.
 *
 * A request that arrives while the loop is busy waits for the stretch to end, so what makes a
 * p99 is the long stretches, not the total CPU: the table gives each source's time inside stretches
 * of at least `longMs` as its share of the tail. A gap between samples far longer than the sampling
 * interval is time the process was not running at all (the machine's other processes had the
 * cores): it is counted as "descheduled", which no change to the server's code removes.
 *
 *   node bench/loop-profile.ts <file.cpuprofile>...   (several: one table over all of them)
 */

export interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

export interface CpuProfile {
  nodes: CpuProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  /** Microseconds from the previous sample (the first: from startTime). */
  timeDeltas: number[];
}

/** What a frame's URL or function name says about who is running. */
const SOURCES: readonly { source: string; match: (url: string, fn: string) => boolean }[] = [
  { source: 'verification counts (flush)', match: (u) => u.includes('/services/keys/verifications.ts') },
  { source: 'refusal events', match: (u) => u.includes('/services/keys/refusal-events.ts') },
  { source: 'cache feed (decode + apply)', match: (u) => /\/events\/(cache-feed|projection-cache)\.ts/.test(u) },
  { source: 'rate-limit block claims', match: (u) => /\/services\/keys\/(block-limiter|rate-limits)\.ts/.test(u) },
  { source: 'key and usage cache loads', match: (u) => u.includes('/services/keys/key-cache.ts') },
  {
    source: 'key path (lean /validate)',
    match: (u) => /\/services\/keys\/(validate-lean|validator|validate-answer|assess|keys\.projection|key-format|metrics)\.ts/.test(u),
  },
  {
    source: 'projections and consumers',
    match: (u) => /\/events\/(consumer|projection|codec|envelope|effects|log-projection)\.ts/.test(u),
  },
  { source: 'metrics (prom-client)', match: (u) => u.includes('/node_modules/prom-client/') },
  { source: 'Kafka client (kafkajs)', match: (u) => u.includes('/node_modules/kafkajs/') },
  { source: 'database client (mongodb)', match: (u) => /\/node_modules\/(mongodb|bson)\//.test(u) },
  {
    source: 'HTTP server (node:http)',
    match: (u, fn) => u.startsWith('node:_http') || fn === 'parserOnHeadersComplete' || fn === 'parserOnBody',
  },
];

const IDLE = '(idle)';
const GC = 'GC';
const DESCHEDULED = 'descheduled (machine)';
const OTHER = 'other';

const LIBRARY = /\/node_modules\//;

/**
 * The source of one sample (frames leaf first): the innermost frame of our code or of node:http
 * names it, so the database client's work under the verification flush is the flush's and writing
 * a response is node:http's whoever asked; a library names only what no code of ours called
 * (the database client reading a reply, Kafka's fetch loop). Else GC, idle or other.
 */
export function sourceOfStack(frames: readonly { functionName: string; url: string }[]): string {
  const leaf = frames[0];
  if (leaf?.functionName === '(idle)') return IDLE;
  if (leaf?.functionName === '(garbage collector)') return GC;
  for (const libraries of [false, true]) {
    for (const f of frames) {
      if (LIBRARY.test(f.url) !== libraries) continue;
      const s = SOURCES.find((candidate) => candidate.match(f.url, f.functionName));
      if (s) return s.source;
    }
  }
  return OTHER;
}

export interface SourceRow {
  source: string;
  /** CPU time of the source over the whole profile, ms. */
  totalMs: number;
  /** Its time inside stretches of at least longMs, ms. */
  inLongMs: number;
  /** Share of all time inside long stretches. */
  tailShare: number;
  /** The longest stretch this source was the largest part of, ms. */
  longestMs: number;
}

export interface LoopProfile {
  durationMs: number;
  busyMs: number;
  /** Busy stretches of at least longMs, and the time in them. */
  longStretches: number;
  inLongMs: number;
  longMs: number;
  rows: SourceRow[];
}

/**
 * Cuts the profile into busy stretches (consecutive non-idle samples) and adds each sample's time
 * to its source. A sample's time is its delta to the next one, capped at `gapMs`; what a delta has
 * beyond that is descheduled time, and it extends the stretch (a request waits through it too).
 */
export function analyseLoop(profile: CpuProfile, options: { longMs?: number; gapMs?: number } = {}): LoopProfile {
  const longMs = options.longMs ?? 2;
  const gapMs = options.gapMs ?? 1;
  const byId = new Map<number, CpuProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const sourceOf = new Map<number, string>();
  const sourceOfNode = (id: number): string => {
    let s = sourceOf.get(id);
    if (s !== undefined) return s;
    const frames: { functionName: string; url: string }[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = byId.get(at);
      if (node) frames.push(node.callFrame);
    }
    s = sourceOfStack(frames);
    sourceOf.set(id, s);
    return s;
  };

  const total = new Map<string, number>();
  const inLong = new Map<string, number>();
  const longest = new Map<string, number>();
  let stretch = new Map<string, number>();
  let stretchMs = 0;
  let longStretches = 0;
  let inLongMs = 0;
  let busyMs = 0;
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  const closeStretch = () => {
    if (stretchMs >= longMs) {
      longStretches++;
      inLongMs += stretchMs;
      let top = '';
      let topMs = -1;
      for (const [k, v] of stretch) {
        add(inLong, k, v);
        if (v > topMs) [top, topMs] = [k, v];
      }
      longest.set(top, Math.max(longest.get(top) ?? 0, stretchMs));
    }
    stretch = new Map();
    stretchMs = 0;
  };

  const n = profile.samples.length;
  for (let i = 0; i < n; i++) {
    // The time a sample stands for: until the next sample (the last: until the profile's end).
    const nextDeltaUs = i + 1 < n ? profile.timeDeltas[i + 1]! : Math.max(0, profile.endTime - sampleTime(profile, i));
    const ms = nextDeltaUs / 1000;
    const source = sourceOfNode(profile.samples[i]!);
    if (source === IDLE) {
      closeStretch();
      continue;
    }
    const own = Math.min(ms, gapMs);
    const away = ms - own;
    add(total, source, own);
    add(stretch, source, own);
    busyMs += own;
    stretchMs += own;
    if (away > 0) {
      add(total, DESCHEDULED, away);
      add(stretch, DESCHEDULED, away);
      stretchMs += away;
    }
  }
  closeStretch();

  const rows: SourceRow[] = [...total.entries()]
    .map(([source, totalMs]) => ({
      source,
      totalMs,
      inLongMs: inLong.get(source) ?? 0,
      tailShare: inLongMs > 0 ? (inLong.get(source) ?? 0) / inLongMs : 0,
      longestMs: longest.get(source) ?? 0,
    }))
    .sort((a, b) => b.inLongMs - a.inLongMs || b.totalMs - a.totalMs);
  return { durationMs: (profile.endTime - profile.startTime) / 1000, busyMs, longStretches, inLongMs, longMs, rows };
}

let cachedTimes: { profile: CpuProfile; times: Float64Array } | undefined;
function sampleTime(profile: CpuProfile, i: number): number {
  if (cachedTimes?.profile !== profile) {
    const times = new Float64Array(profile.samples.length);
    let t = profile.startTime;
    for (let j = 0; j < times.length; j++) {
      t += profile.timeDeltas[j] ?? 0;
      times[j] = t;
    }
    cachedTimes = { profile, times };
  }
  return cachedTimes.times[i]!;
}

/** Several profiles' tables as one (rounds of the same run): times add up, the longest stretch is the longest of any. */
export function mergeLoopProfiles(profiles: readonly LoopProfile[]): LoopProfile {
  const rows = new Map<string, SourceRow>();
  let inLongMs = 0;
  for (const p of profiles) {
    inLongMs += p.inLongMs;
    for (const r of p.rows) {
      const into = rows.get(r.source) ?? { source: r.source, totalMs: 0, inLongMs: 0, tailShare: 0, longestMs: 0 };
      into.totalMs += r.totalMs;
      into.inLongMs += r.inLongMs;
      into.longestMs = Math.max(into.longestMs, r.longestMs);
      rows.set(r.source, into);
    }
  }
  for (const r of rows.values()) r.tailShare = inLongMs > 0 ? r.inLongMs / inLongMs : 0;
  return {
    durationMs: profiles.reduce((a, p) => a + p.durationMs, 0),
    busyMs: profiles.reduce((a, p) => a + p.busyMs, 0),
    longStretches: profiles.reduce((a, p) => a + p.longStretches, 0),
    inLongMs,
    longMs: profiles[0]?.longMs ?? 2,
    rows: [...rows.values()].sort((a, b) => b.inLongMs - a.inLongMs || b.totalMs - a.totalMs),
  };
}

/** The table, as docs/benchmarks.md carries it. */
export function formatLoopProfile(p: LoopProfile): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
  const lines = [
    `${(p.durationMs / 1000).toFixed(1)} s profiled, loop busy ${p.busyMs.toFixed(0)} ms; ${p.longStretches} busy stretches >= ${p.longMs} ms, ${p.inLongMs.toFixed(0)} ms in them`,
    '',
    '| source | CPU ms | ms in long stretches | share of the tail | longest stretch it led, ms |',
    '|---|---|---|---|---|',
    ...p.rows.map(
      (r) => `| ${r.source} | ${r.totalMs.toFixed(1)} | ${r.inLongMs.toFixed(1)} | ${pct(r.tailShare)} | ${r.longestMs.toFixed(1)} |`,
    ),
  ];
  return lines.join('\n');
}

if (import.meta.main) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    process.stderr.write('usage: node bench/loop-profile.ts <file.cpuprofile>... (several: one table over all)\n');
    process.exit(2);
  }
  const profiles = files.map((file) => analyseLoop(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile));
  process.stdout.write(`${formatLoopProfile(mergeLoopProfiles(profiles))}\n`);
}
