/**
 * A unit of work a worker thread can run: an exported async function of a module, named so that the
 * pool can send it across the thread boundary. Input and output are structured-cloned; the types
 * ride along only for the caller's benefit.
 */
export interface Task<I, O> {
  readonly module: string;
  readonly name: string;
  /** Phantom: never set, keeps I and O attached to the value. */
  readonly types?: (input: I) => O;
}

/** `task<In, Out>(new URL('./x.task.ts', import.meta.url), 'run')`: the module must export `name`. */
export function task<I, O>(module: URL, name: string): Task<I, O> {
  return { module: module.href, name };
}

/** What the pool sends a worker. */
export interface TaskMessage {
  readonly id: number;
  readonly module: string;
  readonly name: string;
  readonly input: unknown;
}

/** What a worker answers. `error` carries a name so that the pool can rebuild what callers test for. */
export type TaskReply =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | {
      readonly id: number;
      readonly ok: false;
      readonly error: { readonly name: string; readonly message: string; readonly code?: string };
    };

/**
 * A failure a task reports on purpose (bad input, a refused file): rebuilt in the caller's thread
 * with the same name and code, so callers can tell it from a budget overrun or a crash.
 */
export class TaskError extends Error {
  readonly code: string | undefined;

  constructor(name: string, message: string, code?: string) {
    super(message);
    this.name = name;
    this.code = code;
  }
}
