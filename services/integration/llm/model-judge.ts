import type { Config } from '../../platform/config.ts';

/**
 * An OpenAI-compatible chat model asked to judge the checks the evidence left undecided, from that
 * evidence only. Its answers are marked as the model's; any failure (timeout, refusal, an answer
 * that does not parse) leaves the checks unknown and says why, so a model never breaks a validation.
 */

export interface ModelQuestion {
  component: string;
  context: string | null;
  /** The evidence as text: code snippets and page facts. */
  evidence: string;
  /** The undecided checks, by index into the validation's checks. */
  checks: Array<{ index: number; description: string }>;
}

export interface ModelAnswer {
  judged: Array<{ index: number; status: 'passed' | 'failed'; reason: string }>;
  /** Why the model gave nothing usable, when it did not. */
  problem?: string;
}

const SYSTEM = [
  'You review whether a UI or code component meets sentences of expected behaviour.',
  'Judge ONLY from the evidence given. For each check answer "passed" or "failed" when the evidence shows it, or "unknown" when it does not.',
  'Reply with JSON only: {"checks":[{"index":<number>,"status":"passed"|"failed"|"unknown","reason":"<one sentence citing the evidence>"}]}.',
].join(' ');

export async function askModel(llm: NonNullable<Config['llm']>, question: ModelQuestion, fetchImpl: typeof fetch = fetch): Promise<ModelAnswer> {
  const user = [
    `Component: ${question.component}`,
    question.context ? `Context: ${question.context}` : '',
    'Evidence:',
    question.evidence,
    'Checks:',
    ...question.checks.map((c) => `${c.index}. ${c.description}`),
  ]
    .filter(Boolean)
    .join('\n');
  let response: Response;
  try {
    response = await fetchImpl(`${llm.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(llm.apiKey ? { authorization: `Bearer ${llm.apiKey}` } : {}) },
      body: JSON.stringify({ model: llm.model, temperature: 0, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: user }], response_format: { type: 'json_object' } }),
      signal: AbortSignal.timeout(llm.timeoutMs),
    });
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
    return { judged: [], problem: timedOut ? `the language model did not answer within ${llm.timeoutMs} ms` : 'the language model could not be reached' };
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    return { judged: [], problem: `the language model answered HTTP ${response.status}` };
  }
  const body: unknown = await response.json().catch(() => null);
  const content = (body as { choices?: Array<{ message?: { content?: unknown } }> } | null)?.choices?.[0]?.message?.content;
  if (typeof content !== 'string') return { judged: [], problem: 'the language model\'s answer has no message content' };
  return { judged: parseJudgement(content, question.checks.map((c) => c.index)) };
}

/** The model's JSON, kept to the checks asked about and to passed/failed; anything else is dropped. */
export function parseJudgement(content: string, asked: readonly number[]): ModelAnswer['judged'] {
  const json = /\{[\s\S]*\}/.exec(content)?.[0];
  if (!json) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return [];
  }
  const checks = (parsed as { checks?: unknown }).checks;
  if (!Array.isArray(checks)) return [];
  const seen = new Set<number>();
  const judged: ModelAnswer['judged'] = [];
  for (const entry of checks) {
    const { index, status, reason } = (entry ?? {}) as { index?: unknown; status?: unknown; reason?: unknown };
    if (typeof index !== 'number' || !asked.includes(index) || seen.has(index)) continue;
    if (status !== 'passed' && status !== 'failed') continue;
    seen.add(index);
    judged.push({ index, status, reason: typeof reason === 'string' ? reason.slice(0, 500) : '' });
  }
  return judged;
}
