/** Words of PromQL that look like a metric name and are not one. */
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression selects: every bare identifier once strings, label matchers,
 * ranges, label lists and dashboard variables are taken out, except function names (followed by
 * `(`), keywords and the unit letters of durations and numbers. Enough for the expressions a
 * dashboard and alert rules hold; not a PromQL parser.
 */
export function metricNamesOf(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/gi, ' ')
    .replace(/\$\{?\w+\}?/g, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const name = match[0];
    const before = stripped[match.index - 1] ?? ' ';
    if (/[0-9.]/.test(before)) continue;
    if (
      stripped
        .slice(match.index + name.length)
        .trimStart()
        .startsWith('(')
    )
      continue;
    if (KEYWORDS.has(name.toLowerCase())) continue;
    names.add(name);
  }
  return [...names];
}

/** The series names a metric exposes: a histogram's `_bucket`, `_sum` and `_count` besides its own. */
export function exposedNames(metric: { name: string; type: string }): string[] {
  if (metric.type === 'histogram') return [metric.name, `${metric.name}_bucket`, `${metric.name}_sum`, `${metric.name}_count`];
  if (metric.type === 'summary') return [metric.name, `${metric.name}_sum`, `${metric.name}_count`];
  return [metric.name];
}
