import type { ServerResponse } from 'node:http';
import type { Express } from 'express';
import { faultAnswer, requestIdOf } from '../platform/http/app.ts';
import { clientIpOutside } from '../platform/http/client-ip.ts';
import type { LeanHandler } from '../platform/http/lean-handler.ts';
import type { RouteRef } from '../platform/http/openapi.ts';
import type { Logger } from '../platform/logger.ts';
import { httpMetrics } from '../platform/metrics.ts';
import { counted } from './metrics.ts';
import { answerHead, answerOf, plainKeyBody, readValidateInput, type ValidateAnswer } from './validate-answer.ts';
import type { LocalValidator, ValidationOutcome } from './validator.ts';

/** Bodies the lean path reads; a key body is ~50 bytes, and anything bigger is Express's to refuse or take. */
const LEAN_BODY_MAX = 4096;
const JSON_TYPE = /^application\/json(?:\s*;\s*charset="?utf-8"?)?$/i;

/** The one route the lean handler answers (Express answers it too, for what this passes over). */
export const LEAN_VALIDATE_ROUTE: RouteRef = { method: 'post', path: '/validate' };

const MALFORMED = JSON.stringify({ error: 'request body is not valid JSON', code: 'MALFORMED_JSON' });

/**
 * POST /validate in front of Express: read the body, parse it, hash the key, look it up in memory
 * and answer, with no middleware chain, no promise when everything is held (LocalValidator.check)
 * and a body written from precomputed parts (validate-answer.ts). Its answers, headers and status
 * codes are those of the Express route (validate.routes.ts), which still serves whatever this passes
 * over: another method or path, another content type, a chunked, encoded, empty or large body.
 * Profiled, the Express chain (router, body-parser, res.json) cost more than the validation itself.
 */
export function leanValidate(options: { validator: LocalValidator; log: Logger; service: string }): (app: Express) => LeanHandler {
  const { validator, log, service } = options;
  const observers = new Map<number, (seconds: number) => void>();
  return (app) => (req, res) => {
    if (req.method !== 'POST' || req.url !== LEAN_VALIDATE_ROUTE.path) return false;
    const headers = req.headers;
    const type = headers['content-type'];
    const length = Number(headers['content-length']);
    if (
      type === undefined ||
      (type !== 'application/json' && !JSON_TYPE.test(type)) ||
      !(length > 0 && length <= LEAN_BODY_MAX) ||
      headers['transfer-encoding'] !== undefined ||
      headers['content-encoding'] !== undefined
    ) {
      return false;
    }
    const started = performance.now();
    const id = requestIdOf(headers['x-request-id']);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', ignore); // a client that hangs up mid-body gets no answer to hang up on
    req.on('end', () => {
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      let input = plainKeyBody(bytes);
      if (input === undefined) {
        const text = bytes.toString('utf8');
        let body: unknown;
        try {
          body = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
        } catch {
          body = undefined;
        }
        // express.json is strict: only an object or an array is a JSON body.
        if (body === null || typeof body !== 'object') {
          send(res, id, { status: 400, rate: null, body: MALFORMED }, started);
          return;
        }
        input = readValidateInput(body);
      }
      if (!input.ok) {
        send(res, id, input.answer, started);
        return;
      }
      const { metric, amount } = input.request;
      let outcome: ValidationOutcome | Promise<ValidationOutcome>;
      try {
        const ip = clientIpOutside(app, req);
        // The usual body names neither: no spread of an empty object per request.
        outcome = validator.check(input.apiKey, metric === undefined && amount === undefined ? { ip } : { ip, ...input.request });
      } catch (err) {
        fail(res, id, err, started);
        return;
      }
      if (!(outcome instanceof Promise)) send(res, id, answerOf(counted(outcome)), started);
      else
        outcome.then(
          (o) => send(res, id, answerOf(counted(o)), started),
          (err: unknown) => fail(res, id, err, started),
        );
    });
    return true;
  };

  function send(res: ServerResponse, id: string, answer: ValidateAnswer, started: number): void {
    const head = answerHead(id, answer.bytes ?? Buffer.byteLength(answer.body), answer.rate);
    end(res, answer.status, head, answer.body, started);
  }

  function fail(res: ServerResponse, id: string, err: unknown, started: number): void {
    const answer = faultAnswer(err, id, log.child({ service, requestId: id }));
    const body = JSON.stringify(answer.body);
    const head = ['Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(Buffer.byteLength(body)), 'X-Request-Id', id];
    for (const [name, value] of Object.entries(answer.headers)) head.push(name, value);
    end(res, answer.status, head, body, started);
  }

  function end(res: ServerResponse, status: number, head: string[], body: string, started: number): void {
    if (res.destroyed) return;
    res.writeHead(status, head);
    res.end(body);
    observerOf(status)((performance.now() - started) / 1000);
  }

  /** The duration histogram's series for a status; this route answers with a handful of them. */
  function observerOf(status: number): (seconds: number) => void {
    let observe = observers.get(status);
    if (observe === undefined) {
      observe = httpMetrics.duration.observerOf({ service, method: 'POST', route: '/validate', status: String(status) });
      observers.set(status, observe);
    }
    return observe;
  }
}

function ignore(): void {}
