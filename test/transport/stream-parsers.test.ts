import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../src/providers/common/stream-event.js';
import { createStreamParser } from '../../src/providers/create-stream-parser.js';
import { parseGeminiResponse } from '../../src/providers/gemini/gemini-response.js';
import type { ModelApi } from '../../src/providers/model/model-info.js';
import { parseOpenAIChatResponse } from '../../src/providers/openai-chat/openai-chat-response.js';
import { parseOpenAIResponsesResponse } from '../../src/providers/openai-responses/openai-responses-response.js';
import { ProviderError } from '../../src/providers/transport/provider-error.js';
import * as gemini from '../fixtures/providers/responses/gemini.js';
import * as chat from '../fixtures/providers/responses/openai-chat.js';
import * as responses from '../fixtures/providers/responses/openai-responses.js';

/** Feed `events` (event name, JSON data) to a fresh parser of `api`. */
function parse(api: ModelApi, events: Array<[string, unknown]>) {
  const out: StreamEvent[] = [];
  const parser = createStreamParser(api, (e) => out.push(e));
  for (const [event, data] of events) {
    parser.accept({ event, data: typeof data === 'string' ? data : JSON.stringify(data), id: '' });
  }
  return { parser, out };
}

describe('Anthropic stream parser: block kinds', () => {
  it('keeps redacted thinking opaque, reads a tool_use whose input came whole, and ignores server tools', () => {
    const { parser } = parse('anthropic-messages', [
      [
        'message_start',
        {
          type: 'message_start',
          message: {
            model: 'claude-x',
            usage: { input_tokens: 5, output_tokens: 1, cache_read_input_tokens: 3 },
          },
        },
      ],
      [
        'content_block_start',
        {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'redacted_thinking', data: 'opaque==' },
        },
      ],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      [
        'content_block_start',
        {
          type: 'content_block_start',
          index: 1,
          content_block: { type: 'server_tool_use', id: 's', name: 'web_search', input: {} },
        },
      ],
      ['content_block_stop', { type: 'content_block_stop', index: 1 }],
      [
        'content_block_start',
        {
          type: 'content_block_start',
          index: 2,
          content_block: { type: 'tool_use', id: 't', name: 'read', input: { path: 'a' } },
        },
      ],
      ['content_block_stop', { type: 'content_block_stop', index: 2 }],
      [
        'message_delta',
        { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } },
      ],
      ['message_stop', { type: 'message_stop' }],
    ]);
    expect(parser.complete).toBe(true);
    expect(parser.result()).toEqual({
      role: 'assistant',
      model: 'claude-x',
      stopReason: 'tool_use',
      usage: { inputTokens: 5, outputTokens: 9, cacheReadTokens: 3 },
      content: [
        { type: 'thinking', text: '', signature: 'opaque==', redacted: true },
        { type: 'tool_call', id: 't', name: 'read', input: { path: 'a' } },
      ],
    });
  });

  it('throws an overloaded error event as a retryable ProviderError', () => {
    expect(() =>
      parse('anthropic-messages', [
        ['error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }],
      ]),
    ).toThrow(
      expect.objectContaining({
        retryable: true,
        providerType: 'overloaded_error',
        providerMessage: 'Overloaded',
      }),
    );
    expect(() =>
      parse('anthropic-messages', [
        ['error', { type: 'error', error: { type: 'invalid_request_error', message: 'no' } }],
      ]),
    ).toThrow(expect.objectContaining({ retryable: false }));
  });

  it('drops a tool call cut off by an abort, keeping finished blocks', () => {
    const { parser } = parse('anthropic-messages', [
      [
        'content_block_start',
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      ],
      [
        'content_block_delta',
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Reading' } },
      ],
      [
        'content_block_start',
        {
          type: 'content_block_start',
          index: 1,
          content_block: { type: 'tool_use', id: 't', name: 'read', input: {} },
        },
      ],
      [
        'content_block_delta',
        { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"pa' } },
      ],
    ]);
    expect(parser.complete).toBe(false);
    expect(parser.partial('aborted').content).toEqual([{ type: 'text', text: 'Reading' }]);
  });
});

describe('OpenAI Responses stream parser: items', () => {
  it('reads refusals, reasoning signatures and incomplete responses', () => {
    const { parser } = parse('openai-responses', [
      [
        'response.output_item.added',
        { type: 'response.output_item.added', item: { type: 'reasoning', id: 'rs_1', summary: [] } },
      ],
      [
        'response.reasoning_summary_text.delta',
        { type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', delta: 'hmm' },
      ],
      [
        'response.output_item.done',
        {
          type: 'response.output_item.done',
          item: { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'E' },
        },
      ],
      ['response.refusal.delta', { type: 'response.refusal.delta', item_id: 'msg_1', delta: "I can't help" }],
      [
        'response.incomplete',
        {
          type: 'response.incomplete',
          response: {
            model: 'gpt-x',
            status: 'incomplete',
            incomplete_details: { reason: 'content_filter' },
          },
        },
      ],
    ]);
    const m = parser.result();
    expect(m.stopReason).toBe('refusal');
    expect(m.content).toEqual([
      { type: 'thinking', text: 'hmm', signature: JSON.stringify({ id: 'rs_1', encrypted_content: 'E' }) },
      { type: 'text', text: "I can't help" },
    ]);
  });

  it('throws response.failed with the provider message', () => {
    expect(() =>
      parse('openai-responses', [
        [
          'response.failed',
          { type: 'response.failed', response: { error: { code: 'server_error', message: 'try later' } } },
        ],
      ]),
    ).toThrow(expect.objectContaining({ retryable: true, providerMessage: 'try later' }));
  });
});

describe('Gemini stream parser: parts', () => {
  it('reads thought parts with signatures and synthesises call ids like parseGeminiResponse', () => {
    const { parser } = parse('gemini', [
      [
        'message',
        {
          responseId: 'r-1',
          candidates: [
            { content: { role: 'model', parts: [{ text: 'plan', thought: true, thoughtSignature: 'S1' }] } },
          ],
        },
      ],
      [
        'message',
        {
          candidates: [
            {
              content: {
                role: 'model',
                parts: [{ functionCall: { name: 'read', args: { path: 'x' } }, thoughtSignature: 'S2' }],
              },
              finishReason: 'STOP',
            },
          ],
          usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 2, thoughtsTokenCount: 3 },
        },
      ],
    ]);
    expect(parser.result()).toMatchObject({
      stopReason: 'tool_use',
      usage: { inputTokens: 10, outputTokens: 5 },
      content: [
        { type: 'thinking', text: 'plan', signature: 'S1' },
        {
          type: 'tool_call',
          id: 'gemini_r-1_1',
          name: 'read',
          input: { path: 'x' },
          providerData: { thoughtSignature: 'S2', syntheticId: true },
        },
      ],
    });
  });

  it('ends a blocked prompt as a refusal naming the reason', () => {
    const { parser } = parse('gemini', [['message', { promptFeedback: { blockReason: 'SAFETY' } }]]);
    expect(parser.complete).toBe(true);
    expect(parser.result()).toMatchObject({ stopReason: 'refusal', errorMessage: 'prompt blocked: SAFETY' });
  });

  it('throws an error chunk as a ProviderError with its status', () => {
    try {
      parse('gemini', [['message', { error: { code: 503, message: 'overloaded', status: 'UNAVAILABLE' } }]]);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ProviderError);
      expect(err).toMatchObject({ status: 503, retryable: true, providerType: 'UNAVAILABLE' });
    }
  });
});

describe('malformed events', () => {
  it('null or a scalar where an object belongs is skipped: no TypeError, later events still read', () => {
    const cases: Array<[ModelApi, Array<[string, unknown]>]> = [
      [
        'anthropic-messages',
        [
          ['content_block_start', { type: 'content_block_start', index: 0, content_block: null }],
          ['content_block_delta', { type: 'content_block_delta', index: 0 }],
        ],
      ],
      [
        'openai-chat',
        [
          ['message', { choices: [null] }],
          ['message', { choices: [{ index: 0, delta: { tool_calls: [null, 7] } }] }],
        ],
      ],
      [
        'openai-responses',
        [
          ['x', { type: 'response.output_item.added', item: null }],
          ['x', { type: 'response.output_item.done', item: null }],
          ['x', { type: 'response.output_item.done', item: { type: 'reasoning', id: 'r', summary: [null] } }],
          ['x', { type: 'response.output_item.done', item: { type: 'message', id: 'm', content: [null] } }],
          ['x', { type: 'response.output_item.done', item: { type: 'message', id: 'n', content: 5 } }],
        ],
      ],
      [
        'gemini',
        [
          ['message', { candidates: [{ content: { parts: [null, { functionCall: null }] } }] }],
          ['message', { candidates: [null] }],
        ],
      ],
    ];
    for (const [api, events] of cases) {
      const text: Record<ModelApi, [string, unknown]> = {
        'anthropic-messages': [
          'content_block_start',
          { type: 'content_block_start', index: 1, content_block: { type: 'text', text: 'still here' } },
        ],
        'openai-chat': ['message', { choices: [{ index: 0, delta: { content: 'still here' } }] }],
        'openai-responses': [
          'x',
          { type: 'response.output_text.delta', item_id: 'msg_9', delta: 'still here' },
        ],
        gemini: ['message', { candidates: [{ content: { parts: [{ text: 'still here' }] } }] }],
      };
      const { parser } = parse(api, [...events, text[api]]);
      expect(
        parser.partial('error').content.filter((b) => b.type === 'text'),
        api,
      ).toEqual([{ type: 'text', text: 'still here' }]);
    }
  });

  it('a data line that is not JSON is a non-retryable ProviderError quoting it', () => {
    expect(() => parse('openai-chat', [['message', '{not json']])).toThrow(
      expect.objectContaining({ retryable: false, providerMessage: expect.stringContaining('{not json') }),
    );
  });
});

describe('streamed and complete responses agree', () => {
  it('OpenAI Chat: the same message, cached usage and finish reason from chunks as from the complete body', () => {
    const choice = chat.toolCalls.choices[0];
    const calls = choice?.message.tool_calls ?? [];
    const { parser } = parse('openai-chat', [
      [
        'message',
        { model: chat.toolCalls.model, choices: [{ index: 0, delta: { content: 'Reading both files.' } }] },
      ],
      ...calls.map((c, index): [string, unknown] => [
        'message',
        {
          choices: [
            {
              index: 0,
              delta: {
                tool_calls: [
                  {
                    index,
                    id: c.id,
                    function: { name: c.type === 'function' ? c.function.name : '', arguments: '' },
                  },
                ],
              },
            },
          ],
        },
      ]),
      ...calls.map((c, index): [string, unknown] => [
        'message',
        {
          choices: [
            {
              index: 0,
              delta: {
                tool_calls: [
                  { index, function: { arguments: c.type === 'function' ? c.function.arguments : '' } },
                ],
              },
            },
          ],
        },
      ]),
      ['message', { choices: [{ index: 0, delta: {}, finish_reason: choice?.finish_reason }] }],
      ['message', { choices: [], usage: chat.toolCalls.usage }],
      ['message', '[DONE]'],
    ]);
    const complete = parseOpenAIChatResponse(JSON.parse(JSON.stringify(chat.toolCalls)));
    expect(complete.usage).toEqual({ inputTokens: 232, outputTokens: 50, cacheReadTokens: 768 });
    expect(parser.result()).toEqual(complete);

    const refusal = parse('openai-chat', [
      [
        'message',
        {
          model: chat.refusal.model,
          choices: [{ index: 0, delta: { refusal: 'I cannot help with that.' } }],
        },
      ],
      ['message', { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: chat.refusal.usage }],
    ]);
    expect(refusal.parser.result()).toEqual(
      parseOpenAIChatResponse(JSON.parse(JSON.stringify(chat.refusal))),
    );

    const cut = parse('openai-chat', [
      ['message', { choices: [{ index: 0, delta: { content: 'x' }, finish_reason: 'length' }] }],
    ]);
    expect(cut.parser.result().stopReason).toBe('max_tokens');
  });

  it('OpenAI Responses: the same cached usage and incomplete reason from events as from the complete body', () => {
    const { parser } = parse('openai-responses', [
      [
        'response.output_text.delta',
        { type: 'response.output_text.delta', item_id: 'msg_2', delta: 'The picture' },
      ],
      ['response.incomplete', { type: 'response.incomplete', response: responses.incomplete }],
    ]);
    const complete = parseOpenAIResponsesResponse(JSON.parse(JSON.stringify(responses.incomplete)));
    expect(complete).toMatchObject({
      stopReason: 'max_tokens',
      usage: { inputTokens: 488, outputTokens: 80, cacheReadTokens: 512 },
    });
    expect(parser.result()).toEqual(complete);
  });

  it('Gemini: one chunk holding a whole response gives what parseGeminiResponse gives (synthetic ids included)', () => {
    const { parser } = parse('gemini', [['message', gemini.functionCalls]]);
    const complete = parseGeminiResponse(JSON.parse(JSON.stringify(gemini.functionCalls)));
    expect(complete.content[2]).toMatchObject({ providerData: { syntheticId: true } });
    expect(parser.result()).toEqual(complete);
  });
});
