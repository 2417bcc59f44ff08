/**
 * A local OpenAI-compatible chat endpoint over a GGUF model, run by llama.cpp on the CPU
 * (node-llama-cpp's prebuilt binary): what LLM_URL points at when no hosted model is configured.
 *
 *   node deploy/local/llm/server.ts [--model FILE] [--port N] [--host H] [--threads N] [--context N]
 *
 * Serves POST /v1/chat/completions (messages, temperature, max_tokens, response_format text,
 * json_object or json_schema: JSON answers are constrained by a grammar, so they always parse) and
 * GET /v1/models. One generation at a time (two cores do not run two well); a few wait in line and
 * the rest get 429 at once; a request is cut off at --timeout-ms, or when its client goes away.
 * Inference runs on llama.cpp's own threads, never on this event loop.
 * Prints `ready <url>` on stdout when the model is loaded. Exit codes: 64 bad usage, 66 no model
 * file, 1 the model or runtime failed to load.
 */
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { getLlama, type LlamaGrammar, LlamaChatSession, LlamaLogLevel, type ChatHistoryItem } from 'node-llama-cpp';
import { parseChatRequest, type ChatRequest } from './chat-request.ts';

const DEFAULT_MODEL = join(
  process.env.SVC_CACHE_DIR ?? join(homedir(), '.cache', 'svc'),
  'models',
  'smollm2-135m-instruct-q4_1',
  'model.gguf',
);
const MAX_BODY_BYTES = 1 << 20;

function usage(message: string): never {
  process.stderr.write(`llm-server: ${message}\n`);
  process.exit(64);
}

const positiveInt = (name: string, value: string, max: number): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > max) usage(`--${name} must be an integer from 0 to ${max}, not ${JSON.stringify(value)}`);
  return n;
};

let args;
try {
  args = parseArgs({
    options: {
      model: { type: 'string', default: process.env.LLM_MODEL_FILE ?? DEFAULT_MODEL },
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '0' },
      threads: { type: 'string', default: '2' },
      context: { type: 'string', default: '8192' },
      'max-tokens': { type: 'string', default: '512' },
      queue: { type: 'string', default: '8' },
      'timeout-ms': { type: 'string', default: '120000' },
    },
    strict: true,
  }).values;
} catch (err) {
  usage(err instanceof Error ? err.message : String(err));
}
const modelPath = args.model;
const port = positiveInt('port', args.port, 65535);
const threads = Math.max(1, positiveInt('threads', args.threads, 64));
const contextSize = Math.max(512, positiveInt('context', args.context, 131072));
const defaultMaxTokens = Math.max(1, positiveInt('max-tokens', args['max-tokens'], 4096));
const maxWaiting = positiveInt('queue', args.queue, 1000);
const timeoutMs = Math.max(1000, positiveInt('timeout-ms', args['timeout-ms'], 3_600_000));
if (!existsSync(modelPath)) {
  process.stderr.write(`llm-server: no model file at ${modelPath} (bash deploy/local/llm/provision.sh fetches the default one)\n`);
  process.exit(66);
}
const modelName = modelPath.includes('smollm2-135m') ? 'smollm2-135m-instruct' : (modelPath.split('/').at(-2) ?? 'local');

const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error, progressLogs: false });
const model = await llama.loadModel({ modelPath });
const context = await model.createContext({ contextSize, threads, sequences: 1 });
const sequence = context.getSequence();
const jsonGrammar = await llama.getGrammarFor('json');
/** Grammars by schema text: a client asks with the same schema again and again. */
const schemaGrammars = new Map<string, LlamaGrammar>();

async function grammarFor(format: ChatRequest['format']): Promise<LlamaGrammar | undefined> {
  if (format === null) return undefined;
  if (format === 'json') return jsonGrammar;
  const key = JSON.stringify(format);
  let grammar = schemaGrammars.get(key);
  if (!grammar) {
    // The schema subset llama.cpp's grammar builder takes; anything else throws, and becomes a 400.
    grammar = await llama.createGrammarForJsonSchema(format as Parameters<typeof llama.createGrammarForJsonSchema>[0]);
    if (schemaGrammars.size >= 32) schemaGrammars.delete(schemaGrammars.keys().next().value as string);
    schemaGrammars.set(key, grammar);
  }
  return grammar;
}

/** Generations run one after another; `waiting` counts those in line behind the running one. */
let tail: Promise<unknown> = Promise.resolve();
let waiting = 0;

interface Completion {
  text: string;
  promptTokens: number;
  completionTokens: number;
  finish: 'stop' | 'length';
}

async function complete(request: ChatRequest, signal: AbortSignal): Promise<Completion> {
  const grammar = await grammarFor(request.format);
  const history: ChatHistoryItem[] = [
    ...(request.system !== null ? [{ type: 'system' as const, text: request.system }] : []),
    ...request.history.map(
      (m): ChatHistoryItem => (m.role === 'user' ? { type: 'user', text: m.content } : { type: 'model', response: [m.content] }),
    ),
  ];
  const promptTokens = [request.system ?? '', ...request.history.map((m) => m.content), request.prompt].reduce(
    (sum, text) => sum + model.tokenize(text).length,
    0,
  );
  if (promptTokens + request.maxTokens > contextSize) {
    throw new ClientError(
      400,
      'context_length_exceeded',
      `the messages take ${promptTokens} tokens and max_tokens ${request.maxTokens} more; this model's context holds ${contextSize}`,
    );
  }
  const session = new LlamaChatSession({ contextSequence: sequence, autoDisposeSequence: false });
  try {
    session.setChatHistory(history);
    const before = sequence.tokenMeter.usedOutputTokens;
    const { responseText, stopReason } = await session.promptWithMeta(request.prompt, {
      ...(grammar ? { grammar } : {}),
      temperature: request.temperature,
      maxTokens: request.maxTokens,
      signal,
      stopOnAbortSignal: false,
    });
    return {
      text: responseText,
      promptTokens,
      completionTokens: sequence.tokenMeter.usedOutputTokens - before,
      finish: stopReason === 'maxTokens' ? 'length' : 'stop',
    };
  } finally {
    session.dispose({ disposeSequence: false });
  }
}

class ClientError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

const errorBody = (code: string, message: string, type = 'invalid_request_error') => ({ error: { message, type, code } });

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new ClientError(413, 'request_too_large', `the body is over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new ClientError(400, 'invalid_json', 'the body is not JSON');
  }
}

async function chatCompletions(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const parsed = parseChatRequest(await readJson(req), { maxTokens: defaultMaxTokens });
  if (!parsed.ok) throw new ClientError(400, 'invalid_request', parsed.message);
  if (waiting >= maxWaiting) {
    res.setHeader('retry-after', '5');
    throw new ClientError(429, 'busy', `${waiting} requests are waiting for the model already; try again later`);
  }
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error('timeout')), timeoutMs);
  res.on('close', () => {
    if (!res.writableFinished) abort.abort(new Error('client gone'));
  });
  waiting++;
  // `tail` never rejects (a failed generation is its request's alone), so the next one always runs.
  const run = tail.then(() => {
    waiting--;
    if (abort.signal.aborted) throw new ClientError(504, 'timeout', 'the request was given up before the model was free');
    return complete(parsed.request, abort.signal);
  });
  tail = run.catch(() => undefined);
  try {
    const done = await run;
    send(res, 200, {
      id: `chatcmpl-${Date.now().toString(36)}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: modelName,
      choices: [{ index: 0, message: { role: 'assistant', content: done.text }, finish_reason: done.finish }],
      usage: {
        prompt_tokens: done.promptTokens,
        completion_tokens: done.completionTokens,
        total_tokens: done.promptTokens + done.completionTokens,
      },
    });
  } catch (err) {
    if (abort.signal.aborted && !(err instanceof ClientError)) {
      throw new ClientError(504, 'timeout', `the model did not finish within ${timeoutMs} ms`);
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

const server = createServer((req, res) => {
  const path = (req.url ?? '/').split('?')[0];
  const handle = async () => {
    if (req.method === 'GET' && (path === '/v1/models' || path === '/healthz')) {
      return send(res, 200, { object: 'list', data: [{ id: modelName, object: 'model', owned_by: 'local' }] });
    }
    if (path === '/v1/chat/completions') {
      if (req.method !== 'POST') throw new ClientError(405, 'method_not_allowed', 'use POST');
      return chatCompletions(req, res);
    }
    throw new ClientError(404, 'not_found', `no route ${req.method} ${path}`);
  };
  handle().catch((err: unknown) => {
    if (err instanceof ClientError) return send(res, err.status, errorBody(err.code, err.message));
    // A schema llama.cpp's grammar cannot express is the client's to fix.
    if (err instanceof Error && /schema|grammar/i.test(err.message)) return send(res, 400, errorBody('invalid_schema', err.message));
    process.stderr.write(`llm-server: ${err instanceof Error ? err.message : String(err)}\n`);
    send(res, 500, errorBody('internal', 'the model failed to answer', 'server_error'));
  });
});

server.listen(port, args.host, () => {
  const { port: bound } = server.address() as AddressInfo;
  process.stdout.write(`ready http://${args.host}:${bound}/v1\n`);
});

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  server.close();
  server.closeAllConnections();
  void context
    .dispose()
    .then(() => model.dispose())
    .then(() => llama.dispose())
    .finally(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
