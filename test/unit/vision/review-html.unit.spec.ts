import { expect } from 'chai';
import type { RunAnswer, SnapshotAnswer } from '../../../services/vision/app/run-review.ts';
import { type PageImage, renderReviewHtml, reviewPolicy } from '../../../services/vision/review/render-review-html.ts';

const HOSTILE = '"><script>alert(1)</script><img src=https://evil.example/x>';
const PNG_BYTES = Buffer.from('89504e470d0a1a0a', 'hex');

const snapshot = (name: string, extra: Partial<SnapshotAnswer> = {}): SnapshotAnswer => {
  const [check, viewport] = name.split('@') as [string, string | undefined];
  return {
    snapshot: name,
    check,
    viewport: viewport ?? null,
    status: 'failed',
    message: HOSTILE,
    diffRatio: 0.05,
    diffPixels: 3200,
    screenshotId: `cur-${name}`,
    screenshotUrl: `https://svc.example/api/glm/screenshots/cur-${name}`,
    baselineId: `base-${name}`,
    baselineUrl: `https://svc.example/api/glm/screenshots/base-${name}`,
    diffId: `diff-${name}`,
    diffUrl: `https://svc.example/api/glm/diffs/diff-${name}`,
    isBaseline: false,
    decision: null,
    decidedAt: null,
    ...extra,
  };
};

const run = (snapshots: SnapshotAnswer[]): RunAnswer => ({
  success: true,
  runId: '00000000-0000-4000-8000-000000000000',
  suite: 'shop',
  url: `https://shop.example/${HOSTILE}`,
  ranAt: '2026-11-26T00:00:00.000Z',
  passed: 0,
  failed: snapshots.length,
  latest: true,
  reportUrl: 'https://svc.example/api/glm/runs/00000000-0000-4000-8000-000000000000/report',
  checks: [{ name: 'heading', type: 'element', status: 'failed', message: HOSTILE }],
  snapshots,
});

const every = (snapshots: SnapshotAnswer[]): Map<string, PageImage> =>
  new Map(
    snapshots.flatMap((s) => [s.screenshotId, s.baselineId, s.diffId].map((id): [string, PageImage] => [id as string, { png: PNG_BYTES }])),
  );

describe('the review page of a test run (render-review-html)', () => {
  it('escapes every customer string: the only tags are its own, the only script and style carry the nonce', () => {
    const snapshots = [snapshot('page@phone'), snapshot('page@desktop', { decision: 'rejected', decidedAt: '2026-11-26T00:01:00.000Z' })];
    const html = renderReviewHtml(run(snapshots), every(snapshots), 'bm9uY2U=');
    expect(html).to.not.include('<script>alert');
    expect(html).to.not.include('<img src=https');
    expect(html).to.include('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html.match(/<script\b[^>]*>/g)).to.deep.equal(['<script nonce="bm9uY2U=">']);
    expect(html.match(/<style\b[^>]*>/g)).to.deep.equal(['<style nonce="bm9uY2U=">']);
    expect(html).to.include(`content="${reviewPolicy('bm9uY2U=')}"`);
    expect(html).to.not.match(/\sstyle="/);
  });

  it('groups snapshots by viewport, three images each inlined once, a slider where baseline and capture both are', () => {
    const snapshots = [snapshot('page@phone'), snapshot('header@phone'), snapshot('page@desktop')];
    const html = renderReviewHtml(run(snapshots), every(snapshots), 'n');
    expect(html.match(/<h2>Viewport [a-z]+<\/h2>/g)).to.deep.equal(['<h2>Viewport phone</h2>', '<h2>Viewport desktop</h2>']);
    expect(html.match(/src="data:image\/png;base64,/g)).to.have.length(9);
    expect(html.match(/<input type="range"/g)).to.have.length(3);
  });

  it('says what is missing: no baseline on a first run, a deleted image, an image past the budget; no slider then', () => {
    const first = snapshot('page@phone', { baselineId: null, baselineUrl: null, diffId: null, diffUrl: null, isBaseline: true });
    const gone = snapshot('page@desktop');
    const images = new Map<string, PageImage>([
      [first.screenshotId, { png: PNG_BYTES }],
      [gone.screenshotId, { missing: 'too-large' }],
      [gone.diffId as string, { png: PNG_BYTES }],
    ]);
    const html = renderReviewHtml(run([first, gone]), images, 'n');
    expect(html).to.include('none compared: this capture became the baseline');
    expect(html).to.include('no longer stored');
    expect(html).to.include('too large to inline');
    expect(html.match(/<input type="range"/g)).to.equal(null);
  });
});
