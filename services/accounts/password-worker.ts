import { parentPort } from 'node:worker_threads';
import bcrypt from 'bcryptjs';
import type { HashJob, HashOutcome } from './password-pool.ts';

// One bcrypt at a time per worker thread; the sync API is right here, the thread does nothing else.
const port = parentPort;
if (!port) throw new Error('password-worker.ts runs as a worker thread of password-pool.ts');

port.on('message', (job: HashJob) => {
  let outcome: HashOutcome;
  try {
    outcome =
      job.op === 'hash'
        ? { id: job.id, ok: true, value: bcrypt.hashSync(job.password, job.cost) }
        : { id: job.id, ok: true, value: bcrypt.compareSync(job.password, job.hash) };
  } catch (err) {
    outcome = { id: job.id, ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(outcome);
});
