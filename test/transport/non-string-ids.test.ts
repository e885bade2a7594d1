/**
 * Tool call ids that are not strings (an object, a number) count as missing on every surface, stream and whole
 * response alike: the call gets a synthesised id, never `[object Object]`, and two calls with object ids stay two
 * calls (Responses keyed its items by the stringified id and merged their arguments into one call).
 */
import { describe, expect, it } from 'vitest';
import type { ToolCallBlock } from '../../src/conversation.js';
import { parseAnthropicResponse } from '../../src/providers/anthropic-messages/anthropic-response.js';
import { createStreamParser } from '../../src/providers/create-stream-parser.js';
import { parseGeminiResponse } from '../../src/providers/gemini/gemini-response.js';
import type { ProviderOptions } from '../../src/providers/http-provider.js';
import { parseOpenAIChatResponse } from '../../src/providers/openai-chat/openai-chat-response.js';
import { parseOpenAIResponsesResponse } from '../../src/providers/openai-responses/openai-responses-response.js';

type Api = ProviderOptions['api'];

function streamCalls(api: Api, events: Array<[string, unknown]>): ToolCallBlock[] {
  const parser = createStreamParser(api, () => {});
  for (const [event, data] of events) parser.accept({ event, data: JSON.stringify(data), id: '' });
  return parser.result().content.filter((b): b is ToolCallBlock => b.type === 'tool_call');
}

const goodId = (id: unknown) => typeof id === 'string' && id !== '' && !id.includes('[object');

describe('streams: two calls with object ids', () => {
  it('openai-responses: two calls, arguments not merged, synthesised distinct call ids', () => {
    const item = (n: number, args: string) => ({
      type: 'function_call',
      id: { n },
      call_id: { n },
      name: 'read',
      arguments: args,
    });
    const calls = streamCalls('openai-responses', [
      ['', { type: 'response.output_item.added', output_index: 0, item: item(0, '') }],
      [
        '',
        {
          type: 'response.function_call_arguments.delta',
          output_index: 0,
          item_id: { n: 0 },
          delta: '{"a":1}',
        },
      ],
      ['', { type: 'response.output_item.added', output_index: 1, item: item(1, '') }],
      [
        '',
        {
          type: 'response.function_call_arguments.delta',
          output_index: 1,
          item_id: { n: 1 },
          delta: '{"b":2}',
        },
      ],
      ['', { type: 'response.output_item.done', output_index: 0, item: item(0, '{"a":1}') }],
      ['', { type: 'response.output_item.done', output_index: 1, item: item(1, '{"b":2}') }],
      ['', { type: 'response.completed', response: { status: 'completed' } }],
    ]);
    expect(calls.map((c) => c.input)).toEqual([{ a: 1 }, { b: 2 }]);
    expect(calls.every((c) => goodId(c.id))).toBe(true);
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);
  });

  it('anthropic-messages: synthesised distinct ids', () => {
    const start = (index: number) => ({
      type: 'content_block_start',
      index,
      content_block: { type: 'tool_use', id: { index }, name: 'read', input: {} },
    });
    const calls = streamCalls('anthropic-messages', [
      ['message_start', { type: 'message_start', message: { model: 'm' } }],
      ['content_block_start', start(0)],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['content_block_start', start(1)],
      ['content_block_stop', { type: 'content_block_stop', index: 1 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use' } }],
      ['message_stop', { type: 'message_stop' }],
    ]);
    expect(calls).toHaveLength(2);
    expect(calls.every((c) => goodId(c.id))).toBe(true);
    expect(new Set(calls.map((c) => c.id)).size).toBe(2);
  });

  it('openai-chat and gemini (already): synthesised ids', () => {
    const chat = streamCalls('openai-chat', [
      [
        '',
        {
          choices: [
            {
              index: 0,
              delta: {
                tool_calls: [{ index: 0, id: { x: 1 }, function: { name: 'read', arguments: '{}' } }],
              },
            },
          ],
        },
      ],
      [
        '',
        {
          choices: [
            {
              index: 0,
              delta: {
                tool_calls: [{ index: 1, id: { x: 1 }, function: { name: 'read', arguments: '{}' } }],
              },
            },
          ],
        },
      ],
      ['', { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }],
    ]);
    const gemini = streamCalls('gemini', [
      [
        '',
        {
          candidates: [
            {
              content: {
                role: 'model',
                parts: [
                  { functionCall: { id: { x: 1 }, name: 'read', args: {} } },
                  { functionCall: { id: { x: 1 }, name: 'read', args: {} } },
                ],
              },
              finishReason: 'STOP',
            },
          ],
        },
      ],
    ]);
    for (const calls of [chat, gemini]) {
      expect(calls).toHaveLength(2);
      expect(calls.every((c) => goodId(c.id))).toBe(true);
      expect(new Set(calls.map((c) => c.id)).size).toBe(2);
    }
  });
});

describe('whole responses: object ids', () => {
  it('every surface synthesises distinct ids', () => {
    const anthropic = parseAnthropicResponse({
      type: 'message',
      content: [
        { type: 'tool_use', id: { a: 1 }, name: 'read', input: {} },
        { type: 'tool_use', id: 7, name: { toString: 1 }, input: {} },
      ],
      stop_reason: 'tool_use',
    });
    const responses = parseOpenAIResponsesResponse({
      status: 'completed',
      output: [
        { type: 'function_call', id: { a: 1 }, call_id: { a: 1 }, name: 'read', arguments: '{}' },
        { type: 'function_call', id: { a: 2 }, call_id: { a: 2 }, name: 'read', arguments: '{}' },
      ],
    });
    const chat = parseOpenAIChatResponse({
      choices: [
        {
          message: {
            role: 'assistant',
            tool_calls: [
              { id: { a: 1 }, type: 'function', function: { name: 'read', arguments: '{}' } },
              { id: { a: 1 }, type: 'function', function: { name: 'read', arguments: '{}' } },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
    });
    const gemini = parseGeminiResponse({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { functionCall: { id: { a: 1 }, name: 'read', args: {} } },
              { functionCall: { id: [], name: 'read', args: {} } },
            ],
          },
          finishReason: 'STOP',
        },
      ],
    });
    for (const message of [anthropic, responses, chat, gemini]) {
      const calls = message.content.filter((b): b is ToolCallBlock => b.type === 'tool_call');
      expect(calls).toHaveLength(2);
      expect(calls.every((c) => goodId(c.id))).toBe(true);
      expect(new Set(calls.map((c) => c.id)).size).toBe(2);
    }
  });
});
