import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validate } from '@readme/openapi-parser';
import { expect } from 'chai';
import express from 'express';
import { z } from 'zod';
import { FACE_DOCUMENTS } from '../../../app/openapi/faces.ts';
import { generatedFiles, OPENAPI_DIR } from '../../../app/openapi/generate.ts';
import { faceDocument } from '../../../services/platform/http/face-document.ts';
import { type ApiFace, mountedRoutes, undocumentedRoutes } from '../../../services/platform/http/openapi.ts';
import { errorAnswer } from '../../../services/platform/http/platform-answers.ts';

const asDocument = (doc: unknown) => structuredClone(doc) as Parameters<typeof validate>[0];

describe('OpenAPI documents of the HTTP faces', function () {
  this.timeout(60_000);

  for (const { name, document } of FACE_DOCUMENTS) {
    it(`${name}: a valid OpenAPI 3.1 document (@readme/openapi-parser)`, async () => {
      const doc = document();
      expect(doc.openapi).to.match(/^3\.1\./);
      const result = await validate(asDocument(doc));
      expect(result.valid, JSON.stringify(result)).to.equal(true);
      expect(Object.keys(doc.paths)).to.include.members(['/openapi.json', '/docs', '/health/live']);
    });
  }

  it('the validator refuses a document that breaks OpenAPI 3.1', async () => {
    const doc = asDocument(FACE_DOCUMENTS[0]!.document());
    const paths = (doc as { paths: Record<string, Record<string, { parameters?: unknown }>> }).paths;
    paths['/auth/login']!.post!.parameters = [{ name: 'x', in: 'nowhere', schema: { type: 'string' } }];
    expect((await validate(doc)).valid).to.equal(false);
  });

  it('the committed documents and client types (openapi/) are what npm run openapi makes now', async () => {
    const stale: string[] = [];
    for (const [file, text] of await generatedFiles()) {
      let committed = '';
      try {
        committed = readFileSync(join(OPENAPI_DIR, file), 'utf8');
      } catch {
        // missing: stale
      }
      if (committed !== text) stale.push(file);
    }
    expect(stale, 'stale generated files: run npm run openapi and commit openapi/').to.deep.equal([]);
  });

  describe('the route check every face runs at start-up (serveHttp)', () => {
    const face: ApiFace = {
      name: 'probe',
      title: 'probe',
      description: 'a face of two routes',
      version: '0',
      errorSchema: errorAnswer,
      operations: [
        {
          method: 'post',
          path: '/things/:id',
          summary: 'a thing',
          params: z.object({ id: z.string() }),
          responses: { 200: { description: 'ok', schema: z.object({ ok: z.boolean() }) } },
        },
        { method: 'get', path: '/any', summary: 'any', responses: { 405: { description: 'no' } } },
      ],
    };
    const doc = faceDocument(face, { metrics: false });
    const app = () => {
      const a = express();
      a.post('/things/:id', (_req, res) => res.json({ ok: true }));
      a.all('/any', (_req, res) => res.status(405).end());
      return a;
    };

    it('walks the routes of an Express app', () => {
      expect(mountedRoutes(app())).to.deep.equal([
        { path: '/things/:id', methods: ['post'] },
        { path: '/any', methods: 'all' },
      ]);
    });

    it('passes an app whose every route is described', () => {
      expect(undocumentedRoutes(app(), doc)).to.deep.equal([]);
    });

    it('names a mounted route, a route for all methods and a lean route the document lacks', () => {
      const a = app();
      a.get('/things/:id', (_req, res) => res.end());
      a.all('/other', (_req, res) => res.end());
      expect(undocumentedRoutes(a, doc, [{ method: 'post', path: '/validate' }])).to.deep.equal([
        'GET /things/:id',
        '* /other',
        'POST /validate',
      ]);
    });
  });
});
