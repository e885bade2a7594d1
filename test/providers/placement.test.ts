import { describe, expect, it } from 'vitest';
import type { AssistantMessage, Conversation, Message } from '../../src/conversation.js';
import { toAnthropicMessages } from '../../src/providers/anthropic-messages/anthropic-messages.js';
import { parseAnthropicResponse } from '../../src/providers/anthropic-messages/anthropic-response.js';
import { MISSING_RESULT_TEXT } from '../../src/providers/common/prepare-conversation.js';
import { SKIP_THOUGHT_SIGNATURE, toGemini } from '../../src/providers/gemini/gemini.js';
import { parseGeminiResponse } from '../../src/providers/gemini/gemini-response.js';
import { resolveModel } from '../../src/providers/model/model-catalog.js';
import { toOpenAIChat } from '../../src/providers/openai-chat/openai-chat.js';
import { toOpenAIResponses } from '../../src/providers/openai-responses/openai-responses.js';
import { parseOpenAIResponsesResponse } from '../../src/providers/openai-responses/openai-responses-response.js';
import * as anthropicFixtures from '../fixtures/providers/responses/anthropic-messages.js';
import * as geminiFixtures from '../fixtures/providers/responses/gemini.js';
import * as responsesFixtures from '../fixtures/providers/responses/openai-responses.js';
import { call, gif, jpeg, pdf, png, result, scenarios, text } from './scenarios.js';
import { surfaces } from './surfaces.js';

const several = () => scenarios['several-results']?.() as Conversation;

/** A conversation continuing after a parsed assistant message: its tool calls answered with text. */
function continueAfter(assistant: AssistantMessage): Conversation {
  const calls = assistant.content.filter((b) => b.type === 'tool_call');
  return {
    messages: [
      { role: 'user', content: [text('Read both.')] },
      assistant,
      { role: 'tool', results: calls.map((c) => result(c.id, c.name, [text(`contents of ${c.name}`)])) },
    ],
  };
}

describe('system prompt hoisting', () => {
  const conversation: Conversation = {
    messages: [
      { role: 'system', content: 'Conversation rule one.' },
      { role: 'user', content: [text('hi')] },
      { role: 'system', content: 'Rule two, added later.' },
    ],
  };
  const expected = 'Host prompt.\n\nConversation rule one.\n\nRule two, added later.';

  it('goes to each surface’s system field, host prompt first', () => {
    const options = { system: 'Host prompt.' };
    expect(toAnthropicMessages(conversation, 'claude-sonnet-4-5', options).body.system).toBe(expected);
    expect(toOpenAIChat(conversation, 'gpt-4.1', options).body.messages[0]).toEqual({
      role: 'system',
      content: expected,
    });
    expect(toOpenAIResponses(conversation, 'gpt-5', options).body.instructions).toBe(expected);
    expect(toGemini(conversation, 'gemini-2.5-flash', options).body.systemInstruction).toEqual({
      parts: [{ text: expected }],
    });
  });
});

describe('Anthropic placement', () => {
  it('puts all results of a turn in one user message, then the user text that followed them', () => {
    const messages = toAnthropicMessages(several(), 'claude-sonnet-4-5').body.messages;
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages[2]?.content.map((b) => b.type)).toEqual([
      'tool_result',
      'tool_result',
      'tool_result',
      'text',
    ]);
  });

  it('marks error results with is_error', () => {
    const body = toAnthropicMessages(scenarios['error-result']?.() as Conversation, 'claude-sonnet-4-5').body;
    expect(body.messages[2]?.content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'call_1',
      content: [{ type: 'text', text: 'ENOENT: no such file a.png' }],
      is_error: true,
    });
  });

  it('puts cache_control on the last block of the last message', () => {
    const body = toAnthropicMessages(
      scenarios['image-only-result']?.() as Conversation,
      'claude-sonnet-4-5',
      {
        cacheControl: { ttl: '1h' },
      },
    ).body;
    const last = body.messages[body.messages.length - 1];
    expect(last?.content[last.content.length - 1]).toMatchObject({
      type: 'tool_result',
      cache_control: { type: 'ephemeral', ttl: '1h' },
    });
    expect(JSON.stringify(body).match(/cache_control/g)).toHaveLength(1);
  });

  it('echoes its own thinking blocks with their signature and drops other providers’ reasoning', () => {
    const own = parseAnthropicResponse(JSON.parse(JSON.stringify(anthropicFixtures.toolUse)));
    const body = toAnthropicMessages(continueAfter(own), 'claude-sonnet-4-5').body;
    expect(body.messages[1]?.content.slice(0, 2)).toEqual([
      { type: 'thinking', thinking: 'The user wants both files.', signature: 'sig-abc' },
      { type: 'redacted_thinking', data: 'opaque-redacted' },
    ]);
    const foreign: AssistantMessage = { ...own, model: 'gpt-5' };
    const other = toAnthropicMessages(continueAfter(foreign), 'claude-sonnet-4-5').body;
    expect(other.messages[1]?.content.map((b) => b.type)).toEqual(['text', 'tool_use', 'tool_use']);
  });

  it('warns that temperature is not sent', () => {
    const out = toAnthropicMessages(several(), 'claude-sonnet-4-5', { temperature: 0.2 });
    expect(out.body).not.toHaveProperty('temperature');
    expect(out.warnings.map((w) => w.code)).toEqual(['option-ignored']);
  });
});

describe('OpenAI Chat placement', () => {
  it('keeps tool messages text-only and sends ONE user message with the attachments after the run', () => {
    const messages = toOpenAIChat(several(), 'gpt-4.1', { imageDetail: 'high' }).body.messages;
    expect(messages.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'tool',
      'user',
      'user',
    ]);
    for (const m of messages) if (m.role === 'tool') expect(typeof m.content).toBe('string');
    expect(messages[5]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Attachments from tool call call_b (read):' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${png.data}`, detail: 'high' } },
        { type: 'text', text: 'Attachments from tool call call_c (read):' },
        { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${jpeg.data}`, detail: 'high' } },
        {
          type: 'file',
          file: { file_data: `data:application/pdf;base64,${pdf.data}`, filename: 'blank.pdf' },
        },
      ],
    });
  });

  it('tells the model where a result’s attachments went when the result has no text', () => {
    const messages = toOpenAIChat(several(), 'gpt-4.1').body.messages;
    expect(messages[3]).toEqual({
      role: 'tool',
      tool_call_id: 'call_b',
      content: 'Attachments of this result (1 image) follow in the next user message.',
    });
  });

  it('uses max_completion_tokens, or max_tokens when asked', () => {
    expect(toOpenAIChat(several(), 'gpt-4.1', { maxTokens: 99 }).body.max_completion_tokens).toBe(99);
    const legacy = toOpenAIChat(several(), 'gpt-4.1', { maxTokens: 99, maxTokensField: 'max_tokens' }).body;
    expect(legacy).toMatchObject({ max_tokens: 99 });
    expect(legacy).not.toHaveProperty('max_completion_tokens');
  });
});

describe('OpenAI Responses placement', () => {
  it('puts an error result’s media after an Error label, in part order', () => {
    const conversation: Conversation = {
      messages: [
        { role: 'user', content: [text('shoot')] },
        { role: 'assistant', content: [call('c1', 'screenshot', {})], stopReason: 'tool_use' },
        { role: 'tool', results: [result('c1', 'screenshot', [png, text('render failed halfway')], true)] },
      ],
    };
    const input = toOpenAIResponses(conversation, 'gpt-5').body.input;
    expect(input[2]).toEqual({
      type: 'function_call_output',
      call_id: 'c1',
      output: [
        { type: 'input_text', text: 'Error' },
        { type: 'input_image', image_url: `data:image/png;base64,${png.data}` },
        { type: 'input_text', text: 'render failed halfway' },
      ],
    });
  });

  it('echoes its own reasoning items before the calls they preceded', () => {
    const own = parseOpenAIResponsesResponse(JSON.parse(JSON.stringify(responsesFixtures.toolCalls)));
    const body = toOpenAIResponses(continueAfter(own), 'gpt-5', { store: false }).body;
    expect(body.store).toBe(false);
    expect(body.include).toEqual(['reasoning.encrypted_content']);
    expect(body.input.slice(1, 5)).toEqual([
      {
        type: 'reasoning',
        id: 'rs_1',
        summary: [{ type: 'summary_text', text: 'Need both files.\n\nRead them in parallel.' }],
        encrypted_content: 'gAAAA-opaque',
      },
      { type: 'message', role: 'assistant', content: 'Reading both files.' },
      {
        type: 'function_call',
        call_id: 'call_A',
        name: 'read',
        arguments: '{"path":"a.png","range":{"start":1,"end":20}}',
      },
      { type: 'function_call', call_id: 'call_B', name: 'read', arguments: '{}' },
    ]);
    const claude = parseAnthropicResponse(JSON.parse(JSON.stringify(anthropicFixtures.toolUse)));
    const input = toOpenAIResponses(continueAfter(claude), 'gpt-5').body.input;
    expect(input.some((item) => item.type === 'reasoning')).toBe(false);
  });
});

describe('Gemini placement', () => {
  it('echoes function-call thought signatures and only Gemini-assigned ids', () => {
    const own = parseGeminiResponse(JSON.parse(JSON.stringify(geminiFixtures.functionCalls)));
    const body = toGemini(continueAfter(own), 'gemini-3-pro-preview').body;
    expect(body.contents[1]).toEqual({
      role: 'model',
      parts: [
        { text: 'Reading both files.' },
        {
          functionCall: { name: 'read', args: { path: 'a.png', range: { start: 1, end: 20 } } },
          thoughtSignature: 'c2lnLWNhbGw=',
        },
        { functionCall: { name: 'read', args: { path: 'b.pdf' }, id: 'fc-7' } },
      ],
    });
    expect(body.contents[2]?.parts).toEqual([
      { functionResponse: { name: 'read', response: { output: 'contents of read' } } },
      { functionResponse: { name: 'read', id: 'fc-7', response: { output: 'contents of read' } } },
    ]);
  });

  it('gives calls from another provider the documented skip signature on Gemini 3, nothing on 2.x', () => {
    const claude = parseAnthropicResponse(JSON.parse(JSON.stringify(anthropicFixtures.toolUse)));
    const v3 = toGemini(continueAfter(claude), 'gemini-3-pro-preview').body.contents[1]?.parts ?? [];
    expect(v3.map((p) => ('thoughtSignature' in p ? p.thoughtSignature : undefined))).toEqual([
      undefined,
      SKIP_THOUGHT_SIGNATURE,
      undefined,
    ]);
    expect(JSON.stringify(v3)).not.toContain('toolu_01');
    const v2 = toGemini(continueAfter(claude), 'gemini-2.5-flash').body.contents[1]?.parts ?? [];
    expect(JSON.stringify(v2)).not.toContain('thoughtSignature');
  });

  it('error results use the error key', () => {
    const body = toGemini(scenarios['error-result']?.() as Conversation, 'gemini-2.5-flash').body;
    expect(body.contents[2]?.parts[0]).toEqual({
      functionResponse: { name: 'read', id: 'call_1', response: { error: 'ENOENT: no such file a.png' } },
    });
  });

  it('replaces a GIF, which Gemini does not take, by a placeholder', () => {
    const out = toGemini({ messages: [{ role: 'user', content: [text('look'), gif] }] }, 'gemini-2.5-flash');
    expect(out.body.contents[0]?.parts[1]).toEqual({
      text: "[image omitted: model 'gemini-2.5-flash' does not accept image/gif images]",
    });
    expect(out.warnings[0]?.code).toBe('unsupported-input');
  });

  it('maps maxTokens and temperature into generationConfig', () => {
    const body = toGemini(several(), 'gemini-2.5-flash', { maxTokens: 10, temperature: 0 }).body;
    expect(body.generationConfig).toEqual({ maxOutputTokens: 10, temperature: 0 });
  });
});

describe('tool-call pairing', () => {
  for (const surface of surfaces) {
    it(`${surface.api}: a call without a result gets an error result; a stray result and a failed turn are left out`, () => {
      const messages: Message[] = [
        { role: 'user', content: [text('go')] },
        {
          role: 'assistant',
          content: [call('x1', 'read', { path: 'a' })],
          stopReason: 'error',
          errorMessage: 'stream cut',
        },
        { role: 'tool', results: [result('x1', 'read', [text('from the failed turn')])] },
        {
          role: 'assistant',
          content: [call('k1', 'read', { path: 'a' }), call('k2', 'read', { path: 'b' })],
          stopReason: 'tool_use',
        },
        {
          role: 'tool',
          results: [result('k2', 'read', [text('b text')]), result('zz', 'read', [text('stray')])],
        },
      ];
      const out = surface.serialize({ messages }, surface.model);
      const json = JSON.stringify(out.body);
      expect(json).not.toContain('from the failed turn');
      expect(json).not.toContain('stray');
      expect(json).toContain(MISSING_RESULT_TEXT);
      expect(json.indexOf(MISSING_RESULT_TEXT)).toBeLessThan(json.indexOf('b text'));
      expect(out.warnings.map((w) => w.code).sort()).toEqual([
        'missing-tool-result',
        'orphan-tool-result',
        'turn-skipped',
      ]);
    });
  }

  it('an unknown model given as a string is text-only', () => {
    const out = toOpenAIChat({ messages: [{ role: 'user', content: [png] }] }, 'my-local-model');
    expect(out.body.messages).toEqual([
      { role: 'user', content: "[image omitted: model 'my-local-model' does not accept image input]" },
    ]);
    expect(resolveModel('my-local-model').input.image).toBe(false);
  });

  it('rewrites tool-call ids a surface would reject, the same way on the call and its result', () => {
    const messages: Message[] = [
      { role: 'user', content: [text('go')] },
      {
        role: 'assistant',
        content: [call('functions.read:0', 'read', { path: 'a' })],
        stopReason: 'tool_use',
      },
      { role: 'tool', results: [result('functions.read:0', 'read', [text('a text')])] },
    ];
    const anthropic = toAnthropicMessages({ messages }, 'claude-sonnet-4-5').body.messages;
    const useId = (anthropic[1]?.content[0] as { id: string } | undefined)?.id ?? '';
    expect(useId).toMatch(/^[a-zA-Z0-9_-]+$/);
    expect(anthropic[2]?.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: useId });

    const long = 'x'.repeat(64);
    const chat = toOpenAIChat(
      {
        messages: [
          messages[0] as Message,
          { role: 'assistant', content: [call(long, 'read', {})], stopReason: 'tool_use' },
          { role: 'tool', results: [result(long, 'read', [text('a text')])] },
        ],
      },
      'gpt-4.1',
    ).body.messages;
    const chatId = (chat[1] as { tool_calls: Array<{ id: string }> }).tool_calls[0]?.id ?? '';
    expect(chatId).toHaveLength(40);
    expect(chat[2]).toEqual({ role: 'tool', tool_call_id: chatId, content: 'a text' });
    // Ids that already fit are sent unchanged.
    expect(JSON.stringify(toAnthropicMessages(several(), 'claude-sonnet-4-5').body)).toContain(
      '"id":"call_a"',
    );
  });
});
