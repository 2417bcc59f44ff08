import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, ManagedProcess, waitUntil } from '../processes.ts';

/**
 * Starts deploy/local/llm/server.ts (the local OpenAI-compatible model) as a server of the stack's
 * kind (ManagedProcess: its own process group, stopped with its parent whatever kills that) on a
 * free port, and resolves once it answers GET /v1/models, the model loaded. For the tests and the
 * judge bench. Its own process, so llama.cpp's threads never share an event loop with a service.
 */

export interface LocalModel {
  /** The OpenAI-compatible base URL, ending in /v1: what LLM_URL takes. */
  readonly url: string;
  /** The model name it answers to: what LLM_MODEL takes. */
  readonly model: string;
  /** Where the server writes its messages. */
  readonly logFile: string;
  stop(): Promise<void>;
}

export interface LocalModelOptions {
  /** A GGUF file; default: the one deploy/local/llm/provision.sh fetched. */
  modelFile?: string;
  threads?: number;
  contextSize?: number;
  /** How long loading may take before start fails. */
  readyTimeoutMs?: number;
  /** default: a file in a fresh temporary folder, removed by stop(). */
  logFile?: string;
}

const SERVER = fileURLToPath(new URL('./server.ts', import.meta.url));

export async function startLocalModel(options: LocalModelOptions = {}): Promise<LocalModel> {
  const port = await freePort();
  const ownDir = options.logFile ? null : mkdtempSync(join(tmpdir(), 'svc-llm-'));
  const logFile = options.logFile ?? join(ownDir as string, 'llm-server.log');
  const server = new ManagedProcess(
    'llm-server',
    process.execPath,
    [
      SERVER,
      '--port',
      String(port),
      '--threads',
      String(options.threads ?? 2),
      '--context',
      String(options.contextSize ?? 8192),
      ...(options.modelFile ? ['--model', options.modelFile] : []),
    ],
    logFile,
    { graceMs: 5000 },
  );
  server.start();
  const url = `http://127.0.0.1:${port}/v1`;
  let model = 'local';
  try {
    await waitUntil(
      'the local model',
      async () => {
        const res = await fetch(`${url}/models`);
        if (!res.ok) throw new Error(`GET /v1/models answered ${res.status}`);
        model = ((await res.json()) as { data: Array<{ id: string }> }).data[0]?.id ?? model;
      },
      options.readyTimeoutMs ?? 120_000,
      server.diedEarly(),
    );
  } catch (err) {
    // The reason is in the error (diedEarly quotes the log's last lines); the folder goes with the server.
    await stop();
    throw err;
  }
  return { url, model, logFile, stop };

  async function stop(): Promise<void> {
    await server.stop();
    if (ownDir) rmSync(ownDir, { recursive: true, force: true });
  }
}
