import { expect } from 'chai';
import express from 'express';
import { stopPlatform, type StoppableRuntime } from '../../../app/cli/run.ts';
import { createLogger } from '../../../services/platform/logger.ts';
import { listen } from '../../../services/platform/service.ts';
import type { RunningService } from '../../../services/platform/service.ts';

/**
 * The stop order of a process (app/cli/run.ts), on a real HTTP listener: unready at once but still
 * serving through SHUTDOWN_DELAY_MS, then the listener closes and a request in flight finishes, then
 * the older services, the shared clients and the traces; all within the grace.
 */
describe('stopping a process (unit)', () => {
  const log = createLogger('silent');

  async function face(steps: string[], stopping: () => boolean, drainMs: number) {
    const app = express();
    app.get('/health', (_req, res) => void res.status(stopping() ? 503 : 200).json({ stopping: stopping() }));
    app.get('/ok', (_req, res) => void res.json({ ok: true }));
    // The longest request the face runs (a capture, scaled down): it must finish within the drain.
    app.get('/slow', (_req, res) => void setTimeout(() => res.json({ slow: true }), 400));
    const server = await listen(app, '127.0.0.1', 0, { drainMs });
    const service: RunningService = {
      name: 'face',
      url: server.url,
      stop: async () => {
        steps.push('listener closing');
        await server.close();
        steps.push('listener closed');
      },
    };
    return { service, url: server.url };
  }

  it('goes unready first, serves through the delay, drains what is in flight, then closes the rest newest first', async () => {
    const steps: string[] = [];
    let stopping = false;
    const started = Date.now();
    const runtime: StoppableRuntime = {
      config: { shutdownDelayMs: 300, shutdownGraceMs: 3000 },
      markStopping: () => {
        stopping = true;
        steps.push('unready');
      },
      close: async () => void steps.push('clients closed'),
    };
    const { service, url } = await face(steps, () => stopping, 2000);
    const older: RunningService = { name: 'consumers', stop: async () => void steps.push('consumers stopped') };
    const tracing = { shutdown: async () => void steps.push('traces flushed') };

    const stopped = stopPlatform(runtime, [older, service], log, tracing);
    // During the delay: readiness says 503, yet the port still answers (the endpoints have not updated).
    const health = await fetch(`${url}/health`);
    expect(health.status).to.equal(503);
    expect(await health.json()).to.deep.equal({ stopping: true });
    expect((await fetch(`${url}/ok`)).status).to.equal(200);
    const slow = fetch(`${url}/slow`).then(async (r) => ({ status: r.status, body: await r.json(), at: Date.now() - started }));
    expect(steps).to.deep.equal(['unready']);

    expect(await stopped).to.equal(true);
    const done = await slow;
    // The request in flight when the listener closed finished with its answer, not a cut connection.
    expect(done).to.deep.include({ status: 200, body: { slow: true } });
    expect(steps).to.deep.equal([
      'unready',
      'listener closing',
      'listener closed',
      'consumers stopped',
      'clients closed',
      'traces flushed',
    ]);
    // Nothing closed before the delay was out.
    expect(Date.now() - started).to.be.at.least(300);
    // And after the stop the port takes no new connection.
    const refused = await fetch(`${url}/ok`).then(
      () => 'answered',
      (err: unknown) => String((err as { cause?: { code?: string } }).cause?.code),
    );
    expect(refused).to.equal('ECONNREFUSED');
  });

  it('gives up within the grace when a part never stops, and says so', async () => {
    const steps: string[] = [];
    const runtime: StoppableRuntime = {
      config: { shutdownDelayMs: 0, shutdownGraceMs: 1000 },
      markStopping: () => void steps.push('unready'),
      close: async () => void steps.push('clients closed'),
    };
    const stuck: RunningService = { name: 'stuck', stop: () => new Promise<void>(() => undefined) };
    const started = Date.now();
    expect(await stopPlatform(runtime, [stuck], log, undefined)).to.equal(false);
    const took = Date.now() - started;
    expect(took).to.be.at.least(950).and.below(2000);
    expect(steps).to.deep.equal(['unready']);
  });

  it('waits the configured delay before closing anything (the wait is the one it is given)', async () => {
    const steps: string[] = [];
    const runtime: StoppableRuntime = {
      config: { shutdownDelayMs: 10_000, shutdownGraceMs: 1000 },
      markStopping: () => void steps.push('unready'),
      close: async () => void steps.push('clients closed'),
    };
    const waited: number[] = [];
    const service: RunningService = { name: 'face', stop: async () => void steps.push('face stopped') };
    await stopPlatform(runtime, [service], log, undefined, async (ms) => {
      waited.push(ms);
      steps.push('delay');
    });
    expect(waited).to.deep.equal([10_000]);
    expect(steps).to.deep.equal(['unready', 'delay', 'face stopped', 'clients closed']);
  });
});
