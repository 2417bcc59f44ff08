import { escapeHtml as esc } from './escape.ts';

/**
 * The report page's charts as inline SVG (pure): no script and nothing fetched, so the page shows
 * them under a `default-src 'none'` policy and in a mail client. No `xmlns` either: inline SVG in
 * HTML does not need it, and the page is meant to hold no URL at all. Every label is escaped here,
 * so a caller cannot forget to; every coordinate goes through `svgNumber`, so no NaN or Infinity
 * ever reaches an attribute (a browser drops such a shape, or the whole chart).
 */

export const CHART_WIDTH = 720;

export interface Segment {
  label: string;
  value: number;
  color: string;
}

export interface Column {
  /** What the column is, for its tooltip and screen readers. */
  label: string;
  /** Written under the column; '' for none (a caller thins the ticks of a long axis). */
  tick: string;
  segments: readonly Segment[];
}

export interface BarRow {
  label: string;
  value: number;
  /** What a full bar stands for; 0 or less draws an empty track (nothing to scale against). */
  max: number;
  valueLabel: string;
  color: string;
}

export interface ChartText {
  /** Stable and of our own making: used in element ids. */
  id: string;
  title: string;
  /** The chart's data in words, for screen readers. */
  description: string;
}

/** A number fit for an SVG attribute: finite, at most two decimals. */
export function svgNumber(x: number): string {
  return Number.isFinite(x) ? String(Math.round(x * 100) / 100) : '0';
}

/** `length` scaled by value / max, clamped to [0, length]; 0 when there is nothing to scale against. */
export function scaled(value: number, max: number, length: number): number {
  if (!(max > 0) || !Number.isFinite(value) || !Number.isFinite(max)) return 0;
  return (Math.min(Math.max(value, 0), max) / max) * length;
}

/** What stands in for a chart with nothing to draw. */
export const noData = (note = 'No data yet.'): string => `<p class="no-data">${esc(note)}</p>`;

const n = svgNumber;
const safeId = (id: string): string => id.replace(/[^A-Za-z0-9_-]/g, '-');

function frame(text: ChartText, height: number, body: string): string {
  const id = safeId(text.id);
  return (
    `<svg class="chart" id="${id}" viewBox="0 0 ${CHART_WIDTH} ${n(height)}" width="${CHART_WIDTH}" height="${n(height)}" role="img" ` +
    `aria-label="${esc(text.title)}" aria-describedby="${id}-desc" font-size="12">` +
    `<title>${esc(text.title)}</title><desc id="${id}-desc">${esc(text.description)}</desc>${body}</svg>`
  );
}

const label = (x: number, y: number, text: string, anchor: 'start' | 'middle' | 'end' = 'start', extra = ''): string =>
  `<text x="${n(x)}" y="${n(y)}" text-anchor="${anchor}"${extra}>${esc(text)}</text>`;

function legend(items: readonly Omit<Segment, 'value'>[], y: number, x0 = 0): string {
  let x = x0;
  return items
    .map((item) => {
      const swatch = `<rect x="${n(x)}" y="${n(y - 10)}" width="12" height="12" fill="${esc(item.color)}"/>${label(x + 18, y, item.label)}`;
      x += 30 + item.label.length * 7;
      return swatch;
    })
    .join('');
}

/**
 * Columns of stacked segments (queries per day: one segment; test runs: passed and failed) with a
 * zero line and the top of the scale written on the left.
 */
export function columnChart(
  text: ChartText,
  columns: readonly Column[],
  options: { legend?: readonly Omit<Segment, 'value'>[]; emptyNote?: string } = {},
): string {
  if (columns.length === 0) return noData(options.emptyNote);
  const [left, right, top, axis] = [48, 8, options.legend ? 30 : 14, 30];
  const plotHeight = 160;
  const height = top + plotHeight + axis;
  const plotWidth = CHART_WIDTH - left - right;
  const totals = columns.map((c) => c.segments.reduce((t, s) => t + Math.max(s.value, 0), 0));
  const max = totals.reduce((m, t) => Math.max(m, t), 0);
  const slot = plotWidth / columns.length;
  const barWidth = Math.max(1, Math.min(slot * 0.72, 40));
  const baseline = top + plotHeight;

  const parts: string[] = [
    options.legend ? legend(options.legend, 14, left) : '',
    `<line x1="${n(left)}" y1="${n(baseline)}" x2="${n(CHART_WIDTH - right)}" y2="${n(baseline)}" stroke="#9aa0a6"/>`,
    `<line x1="${n(left)}" y1="${n(top)}" x2="${n(CHART_WIDTH - right)}" y2="${n(top)}" stroke="#e3e6ea" stroke-dasharray="4 3"/>`,
    label(left - 6, top + 4, String(max), 'end', ' fill="#5f6368"'),
    label(left - 6, baseline + 4, '0', 'end', ' fill="#5f6368"'),
  ];
  columns.forEach((column, i) => {
    const x = left + i * slot + (slot - barWidth) / 2;
    let y = baseline;
    const rects = column.segments
      .map((s) => {
        const h = scaled(s.value, max, plotHeight);
        y -= h;
        return h > 0 ? `<rect x="${n(x)}" y="${n(y)}" width="${n(barWidth)}" height="${n(h)}" fill="${esc(s.color)}"/>` : '';
      })
      .join('');
    const detail = column.segments.map((s) => `${s.value} ${s.label}`).join(', ');
    parts.push(`<g><title>${esc(`${column.label}: ${detail}`)}</title>${rects}</g>`);
    if (column.tick !== '') parts.push(label(x + barWidth / 2, baseline + 18, column.tick, 'middle', ' fill="#5f6368"'));
  });
  return frame(text, height, parts.join(''));
}

/** One labelled horizontal bar per row, each against its own scale (a severity's share, a quota). */
export function barRows(text: ChartText, rows: readonly BarRow[], emptyNote?: string): string {
  if (rows.length === 0) return noData(emptyNote);
  const [labelWidth, valueWidth, rowHeight] = [170, 190, 30];
  const trackWidth = CHART_WIDTH - labelWidth - valueWidth;
  const height = rows.length * rowHeight + 6;
  const body = rows
    .map((row, i) => {
      const y = 4 + i * rowHeight;
      const width = scaled(row.value, row.max, trackWidth);
      return (
        label(0, y + 16, row.label) +
        `<rect x="${labelWidth}" y="${n(y)}" width="${trackWidth}" height="20" rx="3" fill="#eef0f3"/>` +
        (width > 0 ? `<rect x="${labelWidth}" y="${n(y)}" width="${n(width)}" height="20" rx="3" fill="${esc(row.color)}"/>` : '') +
        label(labelWidth + trackWidth + 10, y + 16, row.valueLabel)
      );
    })
    .join('');
  return frame(text, height, body);
}

/** One bar split into the parts of a whole (verdicts), with a legend that gives counts and shares. */
export function splitBar(text: ChartText, parts: readonly Segment[], emptyNote?: string): string {
  const total = parts.reduce((t, p) => t + Math.max(p.value, 0), 0);
  if (total <= 0) return noData(emptyNote);
  let x = 0;
  const bars = parts
    .map((p) => {
      const width = scaled(p.value, total, CHART_WIDTH);
      const rect =
        width > 0
          ? `<rect x="${n(x)}" y="0" width="${n(width)}" height="28" fill="${esc(p.color)}"><title>${esc(`${p.label}: ${p.value}`)}</title></rect>`
          : '';
      x += width;
      return rect;
    })
    .join('');
  const share = (p: Segment) => `${p.label} ${p.value} (${Math.round((Math.max(p.value, 0) / total) * 100)}%)`;
  return frame(
    text,
    62,
    bars +
      legend(
        parts.map((p) => ({ label: share(p), color: p.color })),
        52,
      ),
  );
}
