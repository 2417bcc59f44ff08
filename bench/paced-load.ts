import { connect, type Socket } from 'node:net';

/**
 * Constant-rate HTTP/1.1 load over keep-alive connections, for latency at a given load.
 *
 * autocannon's rate option lets each connection send its per-second share as fast as it can at
 * the start of every second and then idle, so at "70 % load" the server is saturated for 70 % of
 * each second and the percentiles measure that burst. Here request i is due at start + i / rate,
 * released on the next millisecond tick, and its latency runs from its release, not from when a
 * free connection sent it (wrk2's correction for coordinated omission): a server that falls behind
 * pays for the queue it causes. The tick itself (timer resolution, up to about a millisecond) is
 * not counted: that lateness is the generator's, not the server's.
 */
export interface PacedSpec {
  url: string;
  connections: number;
  seconds: number;
  rate: number;
  /** Raw requests minus the host line: each is `POST <path> ...` headers and body, pre-built. */
  requests: readonly { headers: Record<string, string>; body: string }[];
  /** A response counts as a match when its body starts with this. */
  expectBodyPrefix: string;
}

export interface PacedResult {
  latenciesMs: Float64Array;
  /** When each timed request was released (ms since the epoch), index for index with latenciesMs. */
  releasedAtMs: Float64Array;
  completed: number;
  statusCodes: Record<string, number>;
  mismatches: number;
  errors: number;
  /** Requests still unanswered 10 s after the last was due. */
  timeouts: number;
  seconds: number;
}

interface Connection {
  socket: Socket;
  busy: boolean;
  /** Release time of the request in flight. */
  releasedAt: number;
  buffer: Buffer;
}

/** Each request of the spec as the bytes sent on the wire; both generators (this one and bench/pacer) send these. */
export function wireRequests(spec: Pick<PacedSpec, 'url' | 'requests'>): Buffer[] {
  const url = new URL(spec.url);
  return spec.requests.map(({ headers, body }) => {
    const lines = [
      `POST ${url.pathname} HTTP/1.1`,
      `Host: ${url.host}`,
      'Connection: keep-alive',
      `Content-Length: ${Buffer.byteLength(body)}`,
    ];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`);
  });
}

export async function pacedLoad(spec: PacedSpec): Promise<PacedResult> {
  const url = new URL(spec.url);
  const port = Number(url.port);
  const wire = wireRequests(spec);
  const total = Math.round(spec.rate * spec.seconds);
  let latencies = new Float64Array(Math.max(1, total));
  let releases = new Float64Array(latencies.length);
  let completed = 0;
  let mismatches = 0;
  let errors = 0;
  const statusCodes: Record<string, number> = {};
  const queue: number[] = []; // release times of requests waiting for a free connection
  let next = 0; // index of the next request to become due

  const connections: Connection[] = await Promise.all(
    Array.from(
      { length: spec.connections },
      () =>
        new Promise<Connection>((resolve, reject) => {
          const socket = connect({ host: url.hostname, port, noDelay: true }, () => resolve(conn));
          const conn: Connection = { socket, busy: false, releasedAt: 0, buffer: Buffer.alloc(0) };
          socket.once('error', reject);
        }),
    ),
  );

  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const start = performance.now();
  let sent = 0;

  const send = (conn: Connection, releasedAt: number) => {
    conn.busy = true;
    conn.releasedAt = releasedAt;
    conn.socket.write(wire[sent++ % wire.length]!);
  };
  const dispatch = () => {
    for (const conn of connections) {
      if (queue.length === 0) return;
      if (!conn.busy) send(conn, queue.shift()!);
    }
  };
  const settleIfDone = () => {
    if (next >= total && queue.length === 0 && connections.every((c) => !c.busy)) finish();
  };

  for (const conn of connections) {
    conn.socket.on('error', () => {
      errors++;
      conn.busy = true; // out of service
      settleIfDone();
    });
    conn.socket.on('data', (chunk: Buffer) => {
      conn.buffer = conn.buffer.length ? Buffer.concat([conn.buffer, chunk]) : chunk;
      for (;;) {
        const headerEnd = conn.buffer.indexOf('\r\n\r\n');
        if (headerEnd < 0) return;
        const head = conn.buffer.subarray(0, headerEnd).toString('latin1');
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (conn.buffer.length < headerEnd + 4 + length) return;
        const status = head.slice(9, 12);
        const body = conn.buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString('utf8');
        conn.buffer = conn.buffer.subarray(headerEnd + 4 + length);
        statusCodes[status] = (statusCodes[status] ?? 0) + 1;
        if (status[0] === '2') {
          if (!body.startsWith(spec.expectBodyPrefix)) mismatches++;
          if (completed === latencies.length) {
            const grown = new Float64Array(latencies.length * 2);
            grown.set(latencies);
            latencies = grown;
            const grownReleases = new Float64Array(latencies.length);
            grownReleases.set(releases);
            releases = grownReleases;
          }
          releases[completed] = performance.timeOrigin + conn.releasedAt;
          latencies[completed++] = performance.now() - conn.releasedAt;
        }
        conn.busy = false;
        if (queue.length > 0) send(conn, queue.shift()!);
        settleIfDone();
      }
    });
  }

  // Release what is due every millisecond (timer resolution).
  const interval = 1000 / spec.rate;
  const tick = setInterval(() => {
    const now = performance.now();
    while (next < total && start + next * interval <= now) {
      queue.push(now);
      next++;
    }
    dispatch();
    if (next >= total) {
      clearInterval(tick);
      settleIfDone();
    }
  }, 1);

  const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), (spec.seconds + 10) * 1000).unref());
  const outcome = await Promise.race([finished.then(() => 'done' as const), timeout]);
  clearInterval(tick);
  const timeouts = outcome === 'timeout' ? queue.length + connections.filter((c) => c.busy).length + (total - next) : 0;
  for (const conn of connections) conn.socket.destroy();
  return {
    latenciesMs: latencies.subarray(0, completed),
    releasedAtMs: releases.subarray(0, completed),
    completed,
    statusCodes,
    mismatches,
    errors,
    timeouts,
    seconds: (performance.now() - start) / 1000,
  };
}
