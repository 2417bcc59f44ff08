import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { TaskMessage, TaskReply } from './task.ts';

// One task at a time per thread: the pool sends the next only after this one's reply, so a task
// that loops forever holds this thread alone, and the pool's timer can end it without harming others.
const port = parentPort;
if (!port) throw new Error('worker-main.ts runs as a worker thread of work-pool.ts');

// Below the request loop in the scheduler's eyes: on a busy machine, customer work waits for the
// loop that answers everyone, not the other way round. On Linux a nice value is per thread, and the
// threads this one starts (a model runtime's pool) inherit it.
const nice = (workerData as { nice?: number } | null)?.nice ?? 0;
if (nice > 0) {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid)) setPriority(tid, nice);
  } catch {
    // Not Linux, or not allowed: the thread runs at the process's priority.
  }
}

const modules = new Map<string, Promise<Record<string, unknown>>>();

port.on('message', async (message: TaskMessage) => {
  let reply: TaskReply;
  try {
    let loaded = modules.get(message.module);
    if (!loaded) {
      loaded = import(message.module) as Promise<Record<string, unknown>>;
      modules.set(message.module, loaded);
    }
    const fn = (await loaded)[message.name];
    if (typeof fn !== 'function') throw new Error(`${message.module} exports no function ${message.name}`);
    reply = { id: message.id, ok: true, value: await (fn as (input: unknown) => unknown)(message.input) };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    const code = (e as { code?: unknown }).code;
    reply = { id: message.id, ok: false, error: { name: e.name, message: e.message, ...(typeof code === 'string' ? { code } : {}) } };
  }
  port.postMessage(reply);
});
