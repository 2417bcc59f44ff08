/** How figures read in the rendered reports (pure), the same in markdown and HTML. */

export const DASH = '—';

export const formatCount = (n: number): string => n.toLocaleString('en-US');

export const formatRate = (rate: number | null): string => (rate === null ? DASH : `${(rate * 100).toFixed(1)}%`);

export function formatMs(ms: number | null): string {
  if (ms === null) return DASH;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

/** An ISO time as a reader scans it: minutes are enough, and the zone is said. */
export const formatWhen = (iso: string | null): string => (iso === null ? DASH : `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`);

/** A quota of -1 is unlimited. */
export const formatLimit = (limit: number): string => (limit === -1 ? 'unlimited' : formatCount(limit));

export const verdictOf = (valid: boolean | null): 'valid' | 'invalid' | 'undecided' =>
  valid === true ? 'valid' : valid === false ? 'invalid' : 'undecided';

export const METRIC_NAMES: Record<string, string> = {
  queries: 'Queries',
  filesIndexed: 'Files indexed',
  screenshotsAnalyzed: 'Screenshots analyzed',
};
