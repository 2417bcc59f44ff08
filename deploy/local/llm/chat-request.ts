import { z } from 'zod';

/**
 * The part of OpenAI's chat completions request the local model serves: messages, temperature,
 * max_tokens and response_format (text, any JSON object, or a JSON schema the answer is constrained
 * to). Anything else a client sends is ignored, as OpenAI-compatible servers do; what is read is
 * checked, so a bad request is a 400 that says what is wrong. Pure.
 */

const message = z.object({
  role: z.enum(['system', 'user', 'assistant']),
  content: z.string().max(200_000),
});

const responseFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({
    type: z.literal('json_schema'),
    json_schema: z.object({ name: z.string().max(64).optional(), schema: z.record(z.string(), z.unknown()) }),
  }),
]);

const body = z.object({
  model: z.string().max(200).optional(),
  messages: z.array(message).min(1).max(64),
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: z.number().int().min(1).max(4096).optional(),
  max_completion_tokens: z.number().int().min(1).max(4096).optional(),
  response_format: responseFormat.optional(),
});

export type ChatMessage = z.infer<typeof message>;

export interface ChatRequest {
  /** System messages, joined: a chat template has one system turn. */
  system: string | null;
  /** The turns before the one answered, in order. */
  history: Array<{ role: 'user' | 'assistant'; content: string }>;
  /** The last user message: what the model answers. */
  prompt: string;
  temperature: number;
  maxTokens: number;
  /** null: free text; 'json': any JSON object; else the JSON schema the answer must satisfy. */
  format: null | 'json' | Record<string, unknown>;
}

export type Parsed = { ok: true; request: ChatRequest } | { ok: false; message: string };

export function parseChatRequest(raw: unknown, defaults: { maxTokens: number }): Parsed {
  const parsed = body.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, message: issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'invalid request body' };
  }
  const { messages, temperature, max_tokens, max_completion_tokens, response_format } = parsed.data;
  const last = messages.at(-1);
  if (last?.role !== 'user') return { ok: false, message: 'messages: the last message must be the user turn to answer' };
  const system = messages.filter((m) => m.role === 'system').map((m) => m.content);
  const history = messages
    .slice(0, -1)
    .filter((m): m is ChatMessage & { role: 'user' | 'assistant' } => m.role !== 'system')
    .map(({ role, content }) => ({ role, content }));
  const format =
    response_format?.type === 'json_object' ? 'json' : response_format?.type === 'json_schema' ? response_format.json_schema.schema : null;
  return {
    ok: true,
    request: {
      system: system.length > 0 ? system.join('\n\n') : null,
      history,
      prompt: last.content,
      temperature: temperature ?? 1,
      maxTokens: max_completion_tokens ?? max_tokens ?? defaults.maxTokens,
      format,
    },
  };
}
