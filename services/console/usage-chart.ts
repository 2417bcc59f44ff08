/**
 * The per-day usage chart (pure): bars of one period's days from GET /usage's verification counts,
 * drawn as server-side SVG so the page needs no script and no inline style (the CSP forbids both).
 */

export interface DayCount {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  count: number;
}

export interface Bar {
  day: string;
  count: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface ChartGeometry {
  width: number;
  height: number;
  /** The value the top of the plot stands for: the largest count rounded up to a readable step. */
  top: number;
  bars: Bar[];
}

const PLOT = { width: 620, height: 180, left: 36, bottom: 20, gap: 2 } as const;

/** Every UTC day from `start` through `end` (inclusive), as YYYY-MM-DD. */
export function daysOf(start: Date, end: Date): string[] {
  const days: string[] = [];
  for (let t = Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate()); t <= end.getTime(); t += 86_400_000)
    days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

/** 1, 2, 5, 10, 20, 50, ...: the smallest at or above n (at least 1). */
export function niceCeiling(n: number): number {
  if (n <= 1) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(n));
  for (const step of [1, 2, 5, 10]) if (step * magnitude >= n) return step * magnitude;
  return 10 * magnitude;
}

/** One bar per day of `days` (days without a count have a zero-height bar), scaled to the plot. */
export function chartGeometry(days: readonly string[], counts: readonly DayCount[]): ChartGeometry {
  const byDay = new Map(counts.map((c) => [c.day, c.count]));
  const top = niceCeiling(Math.max(0, ...counts.map((c) => c.count)));
  const plotWidth = PLOT.width - PLOT.left;
  const plotHeight = PLOT.height - PLOT.bottom;
  const slot = days.length === 0 ? 0 : plotWidth / days.length;
  const bars = days.map((day, i) => {
    const count = byDay.get(day) ?? 0;
    const height = (count / top) * plotHeight;
    return {
      day,
      count,
      x: round(PLOT.left + i * slot + PLOT.gap / 2),
      y: round(plotHeight - height),
      width: round(Math.max(1, slot - PLOT.gap)),
      height: round(height),
    };
  });
  return { width: PLOT.width, height: PLOT.height, top, bars };
}

const round = (n: number) => Math.round(n * 100) / 100;

/** The SVG of a chart; `label` names it for assistive technology (the table beside it has the figures). */
export function chartSvg(geometry: ChartGeometry, label: string): string {
  const plotHeight = geometry.height - PLOT.bottom;
  const bars = geometry.bars
    .map(
      (b) =>
        `<rect class="bar" x="${b.x}" y="${b.y}" width="${b.width}" height="${b.height}" data-day="${b.day}" data-count="${b.count}"><title>${b.day}: ${b.count}</title></rect>`,
    )
    .join('');
  const first = geometry.bars[0];
  const last = geometry.bars.at(-1);
  const dayLabels =
    first && last
      ? `<text x="${first.x}" y="${geometry.height - 4}">${first.day.slice(5)}</text><text x="${last.x + last.width}" y="${geometry.height - 4}" text-anchor="end">${last.day.slice(5)}</text>`
      : '';
  return `<svg class="chart" role="img" aria-label="${label}" viewBox="0 0 ${geometry.width} ${geometry.height}" xmlns="http://www.w3.org/2000/svg">
<line class="axis" x1="${PLOT.left}" y1="${plotHeight}" x2="${geometry.width}" y2="${plotHeight}"/>
<text x="${PLOT.left - 4}" y="10" text-anchor="end">${geometry.top}</text><text x="${PLOT.left - 4}" y="${plotHeight}" text-anchor="end">0</text>
${bars}${dayLabels}</svg>`;
}
