import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Express, Response } from 'express';
import { z } from 'zod';
import { escapeHtml } from '../html-escape.ts';
import type { ApiOperation, OpenApiDocument } from './openapi.ts';

/**
 * GET /openapi.json and the human page at GET /docs: Scalar's API reference (@scalar/api-reference,
 * pinned in package.json), its built browser bundle served from node_modules by the service itself,
 * so the page loads nothing from a CDN, under a CSP that allows scripts from this origin only.
 */

export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PATH = '/docs';

/**
 * Scripts only from this origin (the bundle and the two lines that start it), no inline script,
 * no request elsewhere. Styles may be inline: the bundle injects its own stylesheet as <style>.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

// Relative URLs: the page works wherever an ingress mounts the face.
const PAGE = (title: string) =>
  `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title></head>
<body><div id="api-reference"></div><script src="docs/scalar.js"></script><script src="docs/start.js"></script></body>
</html>
`;

// Its client button opens Scalar's hosted client. Its default fonts are on fonts.scalar.com: while
// the page starts, before this configuration applies, the bundle's default theme asks for them
// once, and the CSP refuses them (font-src 'self'); the page then uses the system's fonts.
const START = `Scalar.createApiReference('#api-reference', ${JSON.stringify({
  url: 'openapi.json',
  withDefaultFonts: false,
  hideClientButton: true,
  telemetry: false,
})});\n`;

const BUNDLE = join(dirname(fileURLToPath(import.meta.resolve('@scalar/api-reference/style.css'))), 'browser', 'standalone.js');
let bundle: Promise<Buffer> | undefined;

const html = z.string().describe('An HTML page.');
const script = z.string().describe('JavaScript.');

/** The routes below, for the face's document. */
export const API_DOCS_OPERATIONS: readonly ApiOperation[] = [
  {
    method: 'get',
    path: OPENAPI_PATH,
    summary: "This face's OpenAPI 3.1 document",
    tags: ['docs'],
    responses: { 200: { description: 'The document.', schema: z.record(z.string(), z.unknown()) } },
  },
  {
    method: 'get',
    path: DOCS_PATH,
    summary: 'The API reference page (Scalar) over the document',
    tags: ['docs'],
    responses: { 200: { description: 'The page.', schema: html, contentType: 'text/html' } },
  },
  {
    method: 'get',
    path: `${DOCS_PATH}/scalar.js`,
    summary: "The page's script: Scalar's browser bundle",
    tags: ['docs'],
    responses: { 200: { description: 'The bundle.', schema: script, contentType: 'text/javascript' } },
  },
  {
    method: 'get',
    path: `${DOCS_PATH}/start.js`,
    summary: 'What starts the page',
    tags: ['docs'],
    responses: { 200: { description: 'The script.', schema: script, contentType: 'text/javascript' } },
  },
];

export function mountApiDocs(app: Express, doc: OpenApiDocument): void {
  const json = JSON.stringify(doc);
  const page = PAGE(escapeHtml(doc.info.title));
  app.get(OPENAPI_PATH, (_req, res) => {
    res.set({ 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-cache' }).send(json);
  });
  app.get(DOCS_PATH, (_req, res) => {
    res.set({ 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-cache' });
    withPageHeaders(res).send(page);
  });
  app.get(`${DOCS_PATH}/scalar.js`, async (_req, res) => {
    // Read on first use: 4 MB that most processes never serve.
    bundle ??= readFile(BUNDLE);
    const bytes = await bundle;
    res.set({ 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'public, max-age=3600' });
    withPageHeaders(res).send(bytes);
  });
  app.get(`${DOCS_PATH}/start.js`, (_req, res) => {
    res.set({ 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-cache' });
    withPageHeaders(res).send(START);
  });
}

function withPageHeaders(res: Response): Response {
  return res.set({ 'Content-Security-Policy': DOCS_CSP, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' });
}
