import type { Request, RequestHandler, Response } from 'express';
import { KeyGate, type Admitted, type UseRequest } from '../keys/gate.ts';

const ADMISSION = Symbol('admitted before the body');

interface Admission {
  admitted: Admitted;
  use: UseRequest;
}

type AdmissionLocals = { [ADMISSION]?: Admission };

/**
 * The key gate of a face whose routes read large bodies (pushed files, up to RAG_PUSH_BODY_LIMIT,
 * gzip accepted): asked before any body parser, so an anonymous or refused caller's body is never
 * read, nor inflated. Before, /api/rag/index parsed (and decompressed) up to 10 MB for whoever
 * asked, and only then answered 401; a body that never finished held the request open.
 *
 * The routes still call authorize() with their use, as behind any gate: the admission made here for
 * that same use answers it, so a request is checked and rate-counted once. A route asking for
 * another use (one that meters at the gate) is checked again for it.
 */
export class GateFirst extends KeyGate {
  /** Middleware for in front of the body parsers: `useOf` is the use the request's route asks for. */
  beforeBody(useOf: (req: Request) => UseRequest): RequestHandler {
    return async (req, res, next) => {
      const use = useOf(req);
      const admitted = await admitBeforeBody(req, res, () => super.authorize(req, res, use));
      if (!admitted) return;
      (res.locals as AdmissionLocals)[ADMISSION] = { admitted, use };
      next();
    };
  }

  override async authorize(req: Request, res: Response, use: UseRequest): Promise<Admitted | null> {
    const early = (res.locals as AdmissionLocals)[ADMISSION];
    if (early && sameUse(early.use, use)) return early.admitted;
    return super.authorize(req, res, use);
  }
}

/** Uses that admit alike: only checks (amount 0) are answered from an earlier admission, never a metered use. */
function sameUse(a: UseRequest, b: UseRequest): boolean {
  return a.amount === 0 && b.amount === 0 && a.metric === b.metric;
}

/**
 * Admits a request before its body is read. A refused request's body is never read, so its answer
 * asks for the connection to close: Node would otherwise keep the connection for the rest of the
 * body the client announced (forever, from a client that stalls: found with a 10 MB Content-Length
 * and a few bytes sent), only to throw it away. The close lingers (lingering-close.ts): what the
 * client is still sending is read and discarded for a moment, so it gets its answer, not a reset.
 */
export async function admitBeforeBody<T>(req: Request, res: Response, admit: () => Promise<T | null>): Promise<T | null> {
  const unread = !req.complete;
  if (unread) res.setHeader('Connection', 'close');
  const admitted = await admit();
  if (admitted !== null && unread && !res.headersSent) res.removeHeader('Connection');
  return admitted;
}
