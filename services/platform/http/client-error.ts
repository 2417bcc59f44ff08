import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { closeLingering, isUnparsed, stopParsing } from './lingering-close.ts';

/** How long an answer in progress may take to be written once the connection's next bytes proved unreadable. */
const FINISH_ANSWER_MS = 5000;
/** How long a request whose reading the fault cut short may still be answered by its route. */
const CUT_SHORT_GRACE_MS = 200;
const BAD_REQUEST_BODY = JSON.stringify({ error: 'the request could not be parsed as HTTP', code: 'BAD_REQUEST' });
const BAD_REQUEST = `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(BAD_REQUEST_BODY)}\r\nConnection: close\r\n\r\n${BAD_REQUEST_BODY}`;

/** Node's own answers to these, kept. */
const STATUS_OF: Record<string, string> = {
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Payload Too Large',
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
};

/**
 * What a server does with bytes on a connection that are not HTTP (Node's 'clientError'). Node's
 * own handler destroys the socket, and with it the answer to the request before those bytes when
 * that answer is still being made: a client whose Content-Length undercounted its body got no
 * answer at all to a request it had sent in full (found by npm run fuzz). Here that answer is
 * finished first and the connection closed after it (a request not read in full gets a moment);
 * otherwise the client gets a JSON 400, as every bad request does, and the connection is closed.
 * Either way the close lingers (closeLingering), so the client's unsent bytes do not reset it.
 */
export function onClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (isUnparsed(socket)) return;
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const pending = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  const status = STATUS_OF[err.code ?? ''];
  const answer = status ? `HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n` : BAD_REQUEST;
  if (pending && !pending.writableFinished) {
    // The answer in progress is let finish, then the connection closed. A request the fault cut
    // short (its body ends early, broken chunking) may have no answer coming, only a route waiting
    // for bytes that never come: it gets a moment, then the 400, as Node would have sent at once.
    pending.shouldKeepAlive = false;
    stopParsing(socket);
    const cut = setTimeout(
      () => closeLingering(socket, pending.headersSent ? undefined : answer),
      pending.req.complete ? FINISH_ANSWER_MS : CUT_SHORT_GRACE_MS,
    );
    cut.unref();
    const close = () => {
      clearTimeout(cut);
      closeLingering(socket);
    };
    pending.once('finish', close);
    pending.once('close', close);
    return;
  }
  closeLingering(socket, answer);
}
