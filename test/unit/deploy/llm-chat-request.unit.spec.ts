import { expect } from 'chai';
import { parseChatRequest } from '../../../deploy/local/llm/chat-request.ts';

describe('local model server: the chat request it reads (unit)', () => {
  const defaults = { maxTokens: 512 };

  it('splits system, history and the user turn to answer, and reads the response format', () => {
    const parsed = parseChatRequest(
      {
        model: 'any',
        temperature: 0,
        max_tokens: 100,
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'hello' },
          { role: 'user', content: 'judge this' },
        ],
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
        stream_options: { ignored: true },
      },
      defaults,
    );
    expect(parsed).to.deep.equal({
      ok: true,
      request: {
        system: 'be brief',
        history: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'hello' },
        ],
        prompt: 'judge this',
        temperature: 0,
        maxTokens: 100,
        format: { type: 'object' },
      },
    });
  });

  it('defaults: free text, temperature 1, the server max tokens; json_object is any JSON', () => {
    const plain = parseChatRequest({ messages: [{ role: 'user', content: 'x' }] }, defaults);
    expect(plain).to.deep.include({ ok: true });
    if (plain.ok) expect(plain.request).to.include({ system: null, temperature: 1, maxTokens: 512, format: null });
    const json = parseChatRequest({ messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_object' } }, defaults);
    expect(json.ok && json.request.format).to.equal('json');
  });

  it('refuses what it cannot answer, saying which field', () => {
    expect(parseChatRequest({ messages: [] }, defaults)).to.deep.include({ ok: false });
    expect(parseChatRequest({}, defaults)).to.deep.equal({
      ok: false,
      message: 'messages: Invalid input: expected array, received undefined',
    });
    const last = parseChatRequest({ messages: [{ role: 'assistant', content: 'x' }] }, defaults);
    expect(last).to.deep.equal({ ok: false, message: 'messages: the last message must be the user turn to answer' });
    const temp = parseChatRequest({ messages: [{ role: 'user', content: 'x' }], temperature: 9 }, defaults);
    expect(temp.ok === false && temp.message).to.match(/^temperature: /);
    const role = parseChatRequest({ messages: [{ role: 'tool', content: 'x' }] }, defaults);
    expect(role.ok === false && role.message).to.match(/^messages\.0\.role: /);
  });
});
