/**
 * Stream behaviours found by feeding real recorded streams through the parsers (issue 14): the `[DONE]` sentinel,
 * an empty model name in a first chunk, and Gemini `partialArgs` argument streaming.
 */

import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../src/providers/common/stream-event.js';
import { createStreamParser } from '../../src/providers/create-stream-parser.js';
import { PartialArgsAccumulator, parseJsonPath } from '../../src/providers/gemini/gemini-partial-args.js';
import type { ModelApi } from '../../src/providers/model/model-info.js';

function parse(api: ModelApi, events: Array<[string, unknown]>) {
  const out: StreamEvent[] = [];
  const parser = createStreamParser(api, (e) => out.push(e));
  for (const [event, data] of events) {
    parser.accept({ event, data: typeof data === 'string' ? data : JSON.stringify(data), id: '' });
  }
  return { parser, out };
}

const anthropicText: Array<[string, unknown]> = [
  ['message_start', { type: 'message_start', message: { model: 'claude-x', usage: { input_tokens: 3 } } }],
  [
    'content_block_start',
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  ],
  [
    'content_block_delta',
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
  ],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  [
    'message_delta',
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } },
  ],
  ['message_stop', { type: 'message_stop' }],
];

const responsesText: Array<[string, unknown]> = [
  ['response.created', { type: 'response.created', response: { model: 'gpt-x' } }],
  [
    'response.output_item.added',
    { type: 'response.output_item.added', item: { type: 'message', id: 'm1', content: [] } },
  ],
  ['response.output_text.delta', { type: 'response.output_text.delta', item_id: 'm1', delta: 'Hi' }],
  [
    'response.completed',
    {
      type: 'response.completed',
      response: { model: 'gpt-x', status: 'completed', usage: { input_tokens: 3, output_tokens: 2 } },
    },
  ],
];

const geminiText: Array<[string, unknown]> = [
  [
    'message',
    {
      candidates: [{ content: { role: 'model', parts: [{ text: 'Hi' }] }, finishReason: 'STOP' }],
      modelVersion: 'gemini-x',
      usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2 },
    },
  ],
];

describe('data: [DONE] after a finished stream', () => {
  it.each([
    ['anthropic-messages', anthropicText],
    ['openai-responses', responsesText],
    ['gemini', geminiText],
  ] as const)('%s: ignored, the complete message stands', (api, events) => {
    const { parser } = parse(api, [...events, ['message', '[DONE]']]);
    expect(parser.complete).toBe(true);
    const message = parser.result();
    expect(message.stopReason).toBe('end');
    expect(message.content).toEqual([{ type: 'text', text: 'Hi' }]);
    expect(message.usage).toEqual({ inputTokens: 3, outputTokens: 2 });
  });

  it.each(['anthropic-messages', 'openai-responses', 'gemini'] as const)(
    '%s: [DONE] alone does not complete a stream',
    (api) => {
      const { parser } = parse(api, [['message', '[DONE]']]);
      expect(parser.complete).toBe(false);
    },
  );
});

describe('model name', () => {
  it('OpenAI Chat: an empty model in the first chunk is replaced by the name a later chunk gives', () => {
    const chunk = (model: string, delta: Record<string, unknown>, finish: string | null = null) => ({
      id: 'c',
      object: 'chat.completion.chunk',
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    const { parser } = parse('openai-chat', [
      ['message', chunk('', { role: 'assistant', content: '' })],
      ['message', chunk('qwen-plus', { content: 'Hello' })],
      ['message', chunk('qwen-plus', {}, 'stop')],
      ['message', '[DONE]'],
    ]);
    expect(parser.result().model).toBe('qwen-plus');
  });

  it.each([
    ['anthropic-messages', [['message_start', { type: 'message_start', message: { model: '' } }]]],
    ['openai-responses', [['response.created', { type: 'response.created', response: { model: '' } }]]],
    ['gemini', [['message', { candidates: [{ content: { parts: [{ text: 'a' }] } }], modelVersion: '' }]]],
  ] as Array<[ModelApi, Array<[string, unknown]>]>)(
    '%s: an empty model name is never recorded',
    (api, events) => {
      const { parser } = parse(api, events);
      expect(parser.partial('error').model).toBeUndefined();
    },
  );
});

/** A Gemini chunk holding one `functionCall` part. */
function fc(functionCall: Record<string, unknown>, extra: Record<string, unknown> = {}): [string, unknown] {
  return [
    'message',
    {
      candidates: [{ content: { role: 'model', parts: [{ functionCall, ...extra }] } }],
      modelVersion: 'gemini-3.1-pro-preview',
      responseId: 'r1',
    },
  ];
}

function finish(): [string, unknown] {
  return [
    'message',
    {
      candidates: [{ content: { role: 'model', parts: [{ functionCall: {} }] }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 26, candidatesTokenCount: 23, thoughtsTokenCount: 132 },
      responseId: 'r1',
    },
  ];
}

describe('Gemini streamed function-call arguments (partialArgs)', () => {
  it('assembles two streamed calls with names, signature and string pieces joined per path', () => {
    const { parser, out } = parse('gemini', [
      fc({ name: 'getWeather', willContinue: true }, { thoughtSignature: 'sig==' }),
      fc({
        partialArgs: [{ jsonPath: '$.location', stringValue: 'Bos', willContinue: true }],
        willContinue: true,
      }),
      fc({
        partialArgs: [{ jsonPath: '$.location', stringValue: 'ton', willContinue: true }],
        willContinue: true,
      }),
      fc({ partialArgs: [{ jsonPath: '$.location', stringValue: '' }], willContinue: true }),
      fc({}),
      fc({ name: 'getWeather', willContinue: true }),
      fc({
        partialArgs: [{ jsonPath: '$.location', stringValue: 'San Francisco', willContinue: true }],
        willContinue: true,
      }),
      fc({ partialArgs: [{ jsonPath: '$.location', stringValue: '' }], willContinue: true }),
      finish(),
    ]);
    expect(parser.complete).toBe(true);
    const message = parser.result();
    expect(message.stopReason).toBe('tool_use');
    expect(message.content).toEqual([
      {
        type: 'tool_call',
        id: 'gemini_r1_0',
        name: 'getWeather',
        input: { location: 'Boston' },
        providerData: { thoughtSignature: 'sig==', syntheticId: true },
      },
      {
        type: 'tool_call',
        id: 'gemini_r1_1',
        name: 'getWeather',
        input: { location: 'San Francisco' },
        providerData: { syntheticId: true },
      },
    ]);
    expect(message.usage).toEqual({ inputTokens: 26, outputTokens: 155 });
    expect(out.filter((e) => e.type === 'toolcall_end')).toHaveLength(2);
  });

  it('builds nested objects and arrays, numbers, booleans and null; empty continuation parts change nothing', () => {
    const { parser } = parse('gemini', [
      fc({ name: 'cookRecipe', id: 'call-7', willContinue: true }),
      fc({
        partialArgs: [
          { jsonPath: '$.recipe.ingredients[0].amount', stringValue: '16 oz', willContinue: true },
          { jsonPath: '$.recipe.ingredients[0].amount', stringValue: '' },
          { jsonPath: '$.recipe.ingredients[0].name', stringValue: 'Noodles' },
        ],
        willContinue: true,
      }),
      fc({ willContinue: true }),
      fc({
        partialArgs: [
          { jsonPath: '$.recipe.ingredients[1].name', stringValue: 'Beef' },
          { jsonPath: "$.recipe['serves people']", numberValue: 4 },
          { jsonPath: '$.recipe.vegan', boolValue: false },
          { jsonPath: '$.recipe.note', nullValue: 'NULL_VALUE' },
        ],
      }),
      finish(),
    ]);
    const [call] = parser.result().content;
    expect(call).toEqual({
      type: 'tool_call',
      id: 'call-7',
      name: 'cookRecipe',
      input: {
        recipe: {
          ingredients: [{ amount: '16 oz', name: 'Noodles' }, { name: 'Beef' }],
          'serves people': 4,
          vegan: false,
          note: null,
        },
      },
    });
  });

  it('a call still open at the finish reason is closed with the arguments so far', () => {
    const { parser } = parse('gemini', [
      fc({ name: 'read', willContinue: true }),
      fc({ partialArgs: [{ jsonPath: '$.path', stringValue: 'a.txt' }], willContinue: true }),
      [
        'message',
        { candidates: [{ content: { role: 'model', parts: [] }, finishReason: 'STOP' }], responseId: 'r1' },
      ],
    ]);
    expect(parser.result().content).toMatchObject([
      { type: 'tool_call', name: 'read', input: { path: 'a.txt' } },
    ]);
  });

  it('a piece it cannot place keeps the raw pieces as invalid arguments instead of dropping them', () => {
    const pieces = [
      { jsonPath: '$.items[0]', stringValue: 'a' },
      { jsonPath: '$.items[5]', stringValue: 'hole' },
    ];
    const { parser } = parse('gemini', [
      fc({ name: 'list', willContinue: true }),
      fc({ partialArgs: pieces }),
      finish(),
    ]);
    const [call] = parser.result().content;
    expect(call?.type === 'tool_call' && call.input).toEqual({});
    expect(call?.type === 'tool_call' && call.providerData?.invalidArguments).toMatchObject({
      raw: JSON.stringify(pieces),
    });
  });
});

describe('partialArgs accumulator: hostile input', () => {
  it('reads the JSON path forms it supports and refuses the rest', () => {
    expect(parseJsonPath('$.a.b[2]["c d"][\'e\']')).toEqual(['a', 'b', 2, 'c d', 'e']);
    for (const bad of ['a.b', '$..a', '$[*]', '$.a[', '$[-1]', '$[99999999999]', '$a']) {
      expect(parseJsonPath(bad), bad).toBeUndefined();
    }
  });

  it('refuses a path through a value of another kind and keeps __proto__ an ordinary key', () => {
    const acc = new PartialArgsAccumulator();
    acc.apply([{ jsonPath: '$.__proto__.polluted', stringValue: 'x' }]);
    expect(acc.invalid).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.parse(acc.argumentsText())).toEqual(JSON.parse('{"__proto__":{"polluted":"x"}}'));
    acc.apply([{ jsonPath: '$.__proto__.polluted.deeper', stringValue: 'y' }]);
    expect(acc.invalid).toMatch(/does not fit/);
  });

  it('a huge index cannot allocate a huge array', () => {
    const acc = new PartialArgsAccumulator();
    acc.apply([{ jsonPath: '$.a[999999999]', numberValue: 1 }]);
    expect(acc.invalid).toMatch(/does not fit/);
    expect(acc.argumentsText().length).toBeLessThan(200);
  });

  it('entries that are not objects or carry no value are reported', () => {
    for (const piece of [null, 3, { jsonPath: '$.a' }, { stringValue: 'x' }]) {
      const acc = new PartialArgsAccumulator();
      acc.apply([piece]);
      expect(acc.invalid, JSON.stringify(piece)).toBeDefined();
    }
  });
});

describe('OpenAI Responses error event', () => {
  it('reads the message and code the API nests under `error`', () => {
    const message = 'You exceeded your current quota, please check your plan and billing details.';
    const { parser } = parse('openai-responses', responsesText.slice(0, 1));
    expect(() =>
      parser.accept({
        event: 'error',
        data: JSON.stringify({
          type: 'error',
          sequence_number: 2,
          error: { type: 'insufficient_quota', code: 'insufficient_quota', message, param: null },
        }),
        id: '',
      }),
    ).toThrow(
      expect.objectContaining({
        providerMessage: message,
        providerType: 'insufficient_quota',
        retryable: false,
      }),
    );
  });
});
