import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/**
 * Starts deploy/local/llm/server.ts (the local OpenAI-compatible model) as a child process on a free
 * port and resolves once it has loaded the model and listens. For the tests, the judge bench and the
 * local stack. The child dies with its parent's stop(); it is its own process, so llama.cpp's threads
 * never share this process's CPU budget with its event loop.
 */

export interface LocalModel {
  /** The OpenAI-compatible base URL, ending in /v1: what LLM_URL takes. */
  readonly url: string;
  /** The model name it answers to: what LLM_MODEL takes. */
  readonly model: string;
  stop(): Promise<void>;
}

export interface LocalModelOptions {
  /** A GGUF file; default: the one deploy/local/llm/provision.sh fetched. */
  modelFile?: string;
  port?: number;
  threads?: number;
  contextSize?: number;
  /** How long loading may take before start fails. */
  readyTimeoutMs?: number;
  /** Where the server's own messages go (stderr lines); default: dropped. */
  log?: (line: string) => void;
}

const SERVER = fileURLToPath(new URL('./server.ts', import.meta.url));

export async function startLocalModel(options: LocalModelOptions = {}): Promise<LocalModel> {
  const args = [
    '--disable-warning=ExperimentalWarning',
    SERVER,
    '--port',
    String(options.port ?? 0),
    '--threads',
    String(options.threads ?? 2),
    '--context',
    String(options.contextSize ?? 8192),
    ...(options.modelFile ? ['--model', options.modelFile] : []),
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  createInterface({ input: child.stderr }).on('line', (line) => {
    stderr.push(line);
    if (stderr.length > 20) stderr.shift();
    options.log?.(line);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the local model did not start within ${options.readyTimeoutMs ?? 120_000} ms: ${stderr.join(' | ')}`));
    }, options.readyTimeoutMs ?? 120_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const ready = /^ready (\S+)$/.exec(line);
      if (ready?.[1]) {
        clearTimeout(timer);
        resolve(ready[1]);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the local model exited with code ${code} before it was ready: ${stderr.join(' | ')}`));
    });
  });
  const models = (await (await fetch(`${url}/models`)).json()) as { data: Array<{ id: string }> };
  const model = models.data[0]?.id ?? 'local';

  return {
    url,
    model,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
