import express, { type Express, type Request, type Response } from 'express';
import type { KeyGate, UseRequest } from '../../keys/gate.ts';
import type { RagDeps } from '../app/deps.ts';
import { deleteCollection } from '../app/delete-collection.ts';
import { indexStatus, jobStatus } from '../app/index-status.ts';
import { listCollections } from '../app/list-collections.ts';
import { queryCollection } from '../app/query-collection.ts';
import { requestIndex, waitForJob } from '../app/request-index.ts';
import { setupCollection } from '../app/setup-collection.ts';
import { collectionNameInput, indexInput, queryInput, setupInput } from '../input.ts';
import { API_PATHS } from '../../premium/api-paths.ts';
import { admitter, callerOf, parse } from '../../premium/gated-request.ts';

/** How long `wait: true` may hold a request before answering 202 with the job as it stands. */
const WAIT_LIMIT_MS = 120_000;

/** Pushed files are larger than any other request: /api/rag/index reads its body with its own limit. */
export function mountIndexBody(app: Express, limit: string): void {
  app.post(API_PATHS.rag.index, express.json({ limit, strict: true, type: ['application/json', 'application/*+json'] }));
}

/** The caller's collections (the customer console lists them); not in API_PATHS, which is the specification's list. */
export const COLLECTIONS_PATH = '/api/rag/collections';

/** What the gate checks for an index request: its quota is filesIndexed, which the job itself checks. */
const INDEX_CHECK: UseRequest = { metric: 'filesIndexed', amount: 0 };
/** What the gate checks for every other operation (gated-request.ts's admitter). */
const OPERATION_CHECK: UseRequest = { metric: 'queries', amount: 0 };

/** The gate's check for a request the face gates before reading its body, as its route will ask for it. */
export function gateCheckOf(req: Request): UseRequest {
  // Routing ignores case and a trailing slash; so does this.
  const path = `${req.baseUrl}${req.path}`.toLowerCase().replace(/\/+$/, '');
  return req.method === 'POST' && path === API_PATHS.rag.index ? INDEX_CHECK : OPERATION_CHECK;
}

/**
 * The retrieval operations over HTTP. Every one goes through the gate first (401, 403, 403
 * subscription required, 429), then the operation, which checks its quota and records its use
 * (services/premium/meter.ts): a query uses one of `queries`; an index job uses `filesIndexed`, one
 * per file it really indexes (recorded by the indexer; the request checks room for all it could).
 */
export function mountRagRoutes(app: Express, deps: RagDeps, gate: KeyGate): void {
  const admit = admitter(gate);

  app.post(API_PATHS.rag.setup, async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    res.json(await setupCollection(deps, callerOf(admitted), parse(setupInput, req.body), req.id));
  });

  app.get(COLLECTIONS_PATH, async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    res.json(await listCollections(deps, callerOf(admitted)));
  });

  app.delete(`${COLLECTIONS_PATH}/:collectionName`, async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    const { collectionName } = parse(collectionNameInput, req.params);
    res.json(await deleteCollection(deps, callerOf(admitted), collectionName, req.id));
  });

  app.post(API_PATHS.rag.index, async (req, res) => {
    const admitted = await gate.authorize(req, res, INDEX_CHECK);
    if (!admitted) return;
    const input = parse(indexInput, req.body);
    const accepted = await requestIndex(deps, callerOf(admitted), input, req.id);
    if (!input.wait) {
      res.status(202).json(accepted);
      return;
    }
    const job = await waitForJob(deps, accepted.jobId, WAIT_LIMIT_MS, abortedWith(res));
    if (job && (job.status === 'completed' || job.status === 'failed')) res.json({ success: true, ...jobStatus(job) });
    else res.status(202).json(accepted);
  });

  app.get(`${API_PATHS.rag.index}/:jobId`, async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    res.json({ success: true, ...(await indexStatus(deps, callerOf(admitted), String(req.params.jobId))) });
  });

  app.post(API_PATHS.rag.query, async (req, res) => {
    const admitted = await admit(req, res);
    if (!admitted) return;
    res.json(await queryCollection(deps, callerOf(admitted), parse(queryInput, req.body), req.id));
  });
}

/** Aborted when the client goes away before its answer, so a waiting request stops polling for nobody. */
function abortedWith(res: Response): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}
