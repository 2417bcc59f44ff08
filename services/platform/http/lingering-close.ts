import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** How long a closing connection keeps reading what the client still sends, so its close is not a reset. */
const LINGER_MS = 2000;

const unparsed = new WeakSet<Duplex>();
const closing = new WeakSet<Duplex>();

/** Whether the connection's bytes are no longer read as HTTP (stopParsing was called). */
export function isUnparsed(socket: Duplex): boolean {
  return unparsed.has(socket);
}

/**
 * Takes the HTTP parser off a connection whose next bytes are not HTTP: they are read and thrown
 * away from here on. Left on, the parser raises the same error again for every chunk that arrives.
 */
export function stopParsing(socket: Duplex): void {
  if (unparsed.has(socket)) return;
  unparsed.add(socket);
  socket.removeAllListeners('data');
  socket.removeAllListeners('end');
  socket.on('data', () => {});
  socket.resume();
}

/**
 * Closes a connection the way RFC 9112 §9.6 asks: send what is left (the answer), half-close, and
 * read and discard whatever the client is still sending until it closes too or LINGER_MS pass.
 * Closing with unread bytes in the kernel's buffer makes TCP send a reset, and a reset can throw
 * away the answer the client has not read yet: a client still uploading a body the server refused
 * (413, or 401 before the body) lost its answer that way (found by npm run fuzz).
 */
export function closeLingering(socket: Duplex, last?: string): void {
  if (closing.has(socket)) return;
  closing.add(socket);
  stopParsing(socket);
  const stop = () => {
    clearTimeout(timer);
    socket.destroy();
  };
  const timer = setTimeout(stop, LINGER_MS);
  timer.unref();
  socket.on('end', stop);
  socket.on('error', stop);
  socket.on('close', () => clearTimeout(timer));
  if (last === undefined) socket.end();
  else socket.end(last);
  // A client that already half-closed sends nothing more: close once the answer is out.
  if (socket.readableEnded) socket.once('finish', stop);
}

/**
 * For the server's 'connection' event: Node closes a connection after its last answer with
 * destroySoon(), which destroys it as soon as the answer is written, unread bytes or not.
 */
export function lingerOnClose(socket: Socket): void {
  socket.destroySoon = () => closeLingering(socket);
}
