import { connect } from 'node:net';
import { expect } from 'chai';
import express from 'express';
import { listen } from '../../../services/platform/service.ts';

/** Writes bytes in one go and reads everything the server sends until it closes the connection. */
function exchange(port: number, bytes: string, halfClose = false): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    const done = () => {
      socket.destroy();
      resolve(text);
    };
    socket.on('end', done);
    socket.on('close', done);
    socket.on('error', done);
    // Half-closing says "that was all": a body shorter than its Content-Length will never be whole.
    if (halfClose) socket.end(bytes);
    else socket.write(bytes);
  });
}

/**
 * Sends `head`, waits for the answer, then goes on sending `more` bytes as a client still uploading
 * would, and closes. Reports the answer and whether the server reset the connection on the way.
 */
function keepSendingAfterAnswer(port: number, head: string, more: number): Promise<{ text: string; reset?: string }> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    let text = '';
    let reset: string | undefined;
    let sending = false;
    socket.on('error', (err: Error & { code?: string }) => (reset = err.code ?? err.message));
    socket.on('close', () => resolve({ text, reset }));
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (sending || !text.includes('\r\n\r\n')) return;
      sending = true;
      const piece = Buffer.alloc(64 * 1024, 'x');
      let left = more;
      const pump = () => {
        while (left > 0 && !socket.destroyed) {
          left -= piece.length;
          if (!socket.write(piece)) return void socket.once('drain', pump);
        }
        if (!socket.destroyed) socket.end();
      };
      pump();
    });
    socket.write(head);
  });
}

describe('connections that stop being HTTP (integration)', () => {
  let server: Awaited<ReturnType<typeof listen>>;
  let port: number;

  before(async () => {
    const app = express();
    app.use(express.json());
    // Answered after the body is read: later than the parser meets what follows the request.
    app.post('/echo', (req, res) => res.json({ got: req.body as unknown }));
    // Refuses without reading the body, as the gate's 401 does.
    app.post('/refuse', (_req, res) => res.status(401).json({ error: 'no' }));
    // A body cut short is the parser's 'request aborted': nobody is left to answer, so no noise either.
    app.use(((_err, _req, res, _next) => res.status(400).end()) as express.ErrorRequestHandler);
    server = await listen(app, '127.0.0.1', 0);
    port = Number(new URL(server.url).port);
  });

  after(() => server.close());

  // Found by npm run fuzz: Node's own clientError handler destroyed the socket, and the answer with it.
  it('answers a whole request before closing on the bytes after it that are not HTTP', async () => {
    const body = '{"a":1}';
    const text = await exchange(
      port,
      `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}\u0000\u0001 not http\r\n\r\n`,
    );
    expect(text).to.match(/^HTTP\/1\.1 200 OK\r\n/);
    expect(text).to.include('{"got":{"a":1}}');
    expect(text).to.match(/\r\nConnection: close\r\n/i);
  });

  it('answers a request whose body ends before its Content-Length with a 400, without waiting for it', async () => {
    const text = await exchange(
      port,
      `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":1}`,
      true,
    );
    expect(text).to.match(/^HTTP\/1\.1 400 /);
  });

  it('answers bytes that are not HTTP with a JSON 400, and an oversized head with 431', async () => {
    const garbage = await exchange(port, '\u0000\u0001 not http\r\n\r\n');
    expect(garbage).to.match(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(garbage.slice(garbage.indexOf('\r\n\r\n') + 4))).to.deep.equal({
      error: 'the request could not be parsed as HTTP',
      code: 'BAD_REQUEST',
    });
    const huge = await exchange(port, `GET /echo HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(huge).to.match(/^HTTP\/1\.1 431 /);
  });

  // Found by npm run fuzz: the server closed with the client's bytes unread, a TCP reset, and the
  // reset can discard the answer before the client reads it. The close now lingers.
  it('closes after bytes that are not HTTP without resetting a client that is still sending', async () => {
    const { text, reset } = await keepSendingAfterAnswer(port, '\u0000\u0001 not http\r\n\r\n', 4 * 1024 * 1024);
    expect(text).to.match(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(reset, 'the connection was reset').to.equal(undefined);
  });

  it('closes after refusing a body it did not read without resetting the client still uploading it', async () => {
    const size = 8 * 1024 * 1024;
    const head = `POST /refuse HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/octet-stream\r\nContent-Length: ${size}\r\n\r\n`;
    const { text, reset } = await keepSendingAfterAnswer(port, head, size);
    expect(text).to.match(/^HTTP\/1\.1 401 Unauthorized\r\n/);
    expect(reset, 'the connection was reset').to.equal(undefined);
  });
});
