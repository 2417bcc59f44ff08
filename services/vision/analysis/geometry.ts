import type { Box } from './types.ts';

/** Box arithmetic in document coordinates (CSS pixels). */

export function intersection(a: Box, b: Box): Box | null {
  const x = Math.max(a.x, b.x);
  const y = Math.max(a.y, b.y);
  const right = Math.min(a.x + a.width, b.x + b.width);
  const bottom = Math.min(a.y + a.height, b.y + b.height);
  return right > x && bottom > y ? { x, y, width: right - x, height: bottom - y } : null;
}

export const area = (box: Box | null): number => (box ? box.width * box.height : 0);

export const centre = (box: Box): { x: number; y: number } => ({ x: box.x + box.width / 2, y: box.y + box.height / 2 });

/** Distance from a point to the nearest point of a box (0 inside it). */
export function distanceToBox(point: { x: number; y: number }, box: Box): number {
  const dx = Math.max(box.x - point.x, 0, point.x - (box.x + box.width));
  const dy = Math.max(box.y - point.y, 0, point.y - (box.y + box.height));
  return Math.hypot(dx, dy);
}

export const round2 = (v: number): number => Math.round(v * 100) / 100;

export const describeBox = (box: Box): string => `${round2(box.width)}×${round2(box.height)} at (${round2(box.x)}, ${round2(box.y)})`;
