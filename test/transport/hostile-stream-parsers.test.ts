/**
 * Hostile events fed straight to the four surface stream parsers: lying indexes and ids, starts at an open index,
 * argument JSON that is invalid, cut, deep, huge or aims at `Object.prototype`, values of the wrong kind, and the
 * recorded real streams cut at every event or with bytes flipped. Every case gives the right message or throws a
 * `ProviderError`; nothing else escapes, and no two calls are merged.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AssistantMessage, ToolCallBlock } from '../../src/conversation.js';
import { AnthropicStreamParser } from '../../src/providers/anthropic-messages/anthropic-stream.js';
import { MAX_ARGUMENT_DEPTH } from '../../src/providers/common/argument-depth.js';
import {
  MAX_MESSAGE_BLOCKS,
  MAX_MESSAGE_CHARS,
  MessageBuilder,
} from '../../src/providers/common/message-builder.js';
import type { StreamEvent } from '../../src/providers/common/stream-event.js';
import type { SurfaceStreamParser } from '../../src/providers/common/surface-parser.js';
import { createStreamParser } from '../../src/providers/create-stream-parser.js';
import { GeminiStreamParser } from '../../src/providers/gemini/gemini-stream.js';
import type { ModelApi } from '../../src/providers/model/model-info.js';
import { OpenAIChatStreamParser } from '../../src/providers/openai-chat/openai-chat-stream.js';
import { OpenAIResponsesStreamParser } from '../../src/providers/openai-responses/openai-responses-stream.js';
import { ProviderError } from '../../src/providers/transport/provider-error.js';
import { SseParser } from '../../src/providers/transport/sse-parser.js';
import { fixturesDir, recordedStreams } from '../conformance/wire-fixtures.js';

type Ev = [string, unknown];

/** Feed events to a fresh parser; the finished message (complete) or the partial one, or the error thrown. */
function feed(api: ModelApi, events: Iterable<Ev>) {
  const out: StreamEvent[] = [];
  const parser = createStreamParser(api, (e) => out.push(e));
  let error: unknown;
  try {
    for (const [event, data] of events) {
      parser.accept({ event, data: typeof data === 'string' ? data : JSON.stringify(data), id: '' });
    }
  } catch (err) {
    error = err;
  }
  const message: AssistantMessage =
    error === undefined && parser.complete ? parser.result() : parser.partial('error');
  return { out, error, message, complete: parser.complete };
}

const calls = (m: AssistantMessage) => m.content.filter((b): b is ToolCallBlock => b.type === 'tool_call');
const brief = (m: AssistantMessage) => calls(m).map((c) => [c.id, c.name, c.input]);

// --- per-surface builders of the events a tool call is made of ------------------------------------------------

const A = {
  start: (index: unknown, id: string, name: string): Ev => [
    'content_block_start',
    { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } },
  ],
  args: (index: unknown, partial_json: unknown): Ev => [
    'content_block_delta',
    { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } },
  ],
  text: (index: unknown, text: unknown): Ev => [
    'content_block_delta',
    { type: 'content_block_delta', index, delta: { type: 'text_delta', text } },
  ],
  textStart: (index: unknown): Ev => [
    'content_block_start',
    { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
  ],
  stop: (index: unknown): Ev => ['content_block_stop', { type: 'content_block_stop', index }],
  end: (): Ev[] => [
    [
      'message_delta',
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 1 } },
    ],
    ['message_stop', { type: 'message_stop' }],
  ],
};

const C = {
  call: (fragment: Record<string, unknown>): Ev => [
    'message',
    { id: 'x', model: 'm', choices: [{ index: 0, delta: { tool_calls: [fragment] }, finish_reason: null }] },
  ],
  end: (): Ev[] => [
    ['message', { id: 'x', model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }],
    ['message', '[DONE]'],
  ],
};

const R = {
  added: (id: string, name: string, extra: Record<string, unknown> = {}): Ev => [
    'response.output_item.added',
    {
      type: 'response.output_item.added',
      output_index: 0,
      item: { type: 'function_call', id, call_id: `call_${id}`, name, arguments: '' },
      ...extra,
    },
  ],
  args: (id: string, delta: unknown, extra: Record<string, unknown> = {}): Ev => [
    'response.function_call_arguments.delta',
    { type: 'response.function_call_arguments.delta', item_id: id, output_index: 0, delta, ...extra },
  ],
  done: (id: string, name: string, args: string): Ev => [
    'response.output_item.done',
    {
      type: 'response.output_item.done',
      output_index: 0,
      item: { type: 'function_call', id, call_id: `call_${id}`, name, arguments: args },
    },
  ],
  end: (): Ev[] => [
    ['response.completed', { type: 'response.completed', response: { status: 'completed', model: 'm' } }],
  ],
};

const G = {
  parts: (parts: unknown[], finishReason?: string): Ev => [
    'message',
    { candidates: [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}) }] },
  ],
};

describe('hostile stream parsers: index lies', () => {
  it.each([1e9, -1, 1.5, 2 ** 53])('anthropic: a tool call at index %s is read as one call', (index) => {
    const { message, error } = feed('anthropic-messages', [
      A.start(index, 'tu_1', 'read'),
      A.args(index, '{"path":'),
      A.args(index, '"a"}'),
      A.stop(index),
      ...A.end(),
    ]);
    expect(error).toBeUndefined();
    expect(brief(message)).toEqual([['tu_1', 'read', { path: 'a' }]]);
  });

  it.each(['0', '__proto__', 'length', null, { n: 0 }, undefined])(
    'anthropic: a block index %j that is not a number is a non-retryable ProviderError',
    (index) => {
      const { error } = feed('anthropic-messages', [A.start(index, 'tu_1', 'read')]);
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).retryable).toBe(false);
      expect((error as ProviderError).message).toMatch(/malformed stream event/);
    },
  );

  it('anthropic: deltas for a block never started are dropped, the rest of the message stands', () => {
    const { message, error } = feed('anthropic-messages', [
      A.args(7, '{"x":1}'),
      A.text(8, 'ghost'),
      A.start(0, 'tu_1', 'read'),
      A.args(0, '{}'),
      A.stop(0),
      ...A.end(),
    ]);
    expect(error).toBeUndefined();
    expect(message.content).toEqual([expect.objectContaining({ id: 'tu_1', input: {} })]);
  });

  it('anthropic: two starts at one open index give two calls with their own arguments', () => {
    const { message } = feed('anthropic-messages', [
      A.start(0, 'tu_1', 'read'),
      A.args(0, '{"path":"a"}'),
      A.start(0, 'tu_2', 'write'),
      A.args(0, '{"path":"b"}'),
      A.stop(0),
      ...A.end(),
    ]);
    expect(brief(message)).toEqual([
      ['tu_1', 'read', { path: 'a' }],
      ['tu_2', 'write', { path: 'b' }],
    ]);
  });

  it('anthropic: a delta value that is not a string adds nothing', () => {
    const { message } = feed('anthropic-messages', [
      A.textStart(0),
      A.text(0, 'ok'),
      A.text(0, { evil: 1 }),
      A.text(0, 42),
      A.stop(0),
      ...A.end(),
    ]);
    expect(message.content).toEqual([{ type: 'text', text: 'ok' }]);
  });

  it.each([1e9, -1, 1.5])('openai-chat: tool-call index %s keys one call', (index) => {
    const { message } = feed('openai-chat', [
      C.call({ index, id: 'c1', function: { name: 'read', arguments: '{"a":' } }),
      C.call({ index, function: { arguments: '1}' } }),
      ...C.end(),
    ]);
    expect(brief(message)).toEqual([['c1', 'read', { a: 1 }]]);
  });

  it('openai-chat: a string or missing index continues the call opened last', () => {
    const { message } = feed('openai-chat', [
      C.call({ index: '0', id: 'c1', function: { name: 'read', arguments: '{"a":' } }),
      C.call({ function: { arguments: '1}' } }),
      ...C.end(),
    ]);
    expect(brief(message)).toEqual([['c1', 'read', { a: 1 }]]);
  });

  it('openai-chat: an id that changes at an open index is a second call, not merged', () => {
    const { message } = feed('openai-chat', [
      C.call({ index: 0, id: 'c1', function: { name: 'read', arguments: '{"path":"a"}' } }),
      C.call({ index: 0, id: 'c2', function: { name: 'write', arguments: '{"path":"b"}' } }),
      ...C.end(),
    ]);
    expect(brief(message)).toEqual([
      ['c1', 'read', { path: 'a' }],
      ['c2', 'write', { path: 'b' }],
    ]);
  });

  it('openai-chat: another id without a name renames the open call (no split)', () => {
    const { message } = feed('openai-chat', [
      C.call({ index: 0, id: 'c1', function: { name: 'read', arguments: '{"path":' } }),
      C.call({ index: 0, id: 'c1b', function: { arguments: '"a"}' } }),
      ...C.end(),
    ]);
    expect(brief(message)).toEqual([['c1b', 'read', { path: 'a' }]]);
  });

  it('openai-chat: the same id repeated on every fragment stays one call', () => {
    const { message } = feed('openai-chat', [
      C.call({ index: 0, id: 'c1', function: { name: 'read', arguments: '{"path":' } }),
      C.call({ index: 0, id: 'c1', function: { name: 'read', arguments: '"a"}' } }),
      ...C.end(),
    ]);
    expect(brief(message)).toEqual([['c1', 'read', { path: 'a' }]]);
  });

  it('openai-chat: a fragment for an index never started opens a call with a synthetic id and no name', () => {
    const { message } = feed('openai-chat', [
      C.call({ index: 3, function: { arguments: '{}' } }),
      ...C.end(),
    ]);
    expect(brief(message)).toEqual([['call_1', '', {}]]);
  });

  it('openai-responses: output_index / content_index lies are ignored (items are keyed by id)', () => {
    const { message } = feed('openai-responses', [
      R.added('fc_1', 'read', { output_index: 1e9 }),
      R.args('fc_1', '{"a":', { output_index: -1, content_index: 1.5 }),
      R.args('fc_1', '1}', { output_index: '0' }),
      R.done('fc_1', 'read', '{"a":1}'),
      ...R.end(),
    ]);
    expect(brief(message)).toEqual([['call_fc_1', 'read', { a: 1 }]]);
  });

  it('openai-responses: two items added under one id give two calls; argument deltas for an unknown item are dropped', () => {
    const { message } = feed('openai-responses', [
      R.args('ghost', '{"x":1}'),
      R.added('fc_1', 'read'),
      R.args('fc_1', '{"path":"a"}'),
      R.added('fc_1', 'write'),
      R.args('fc_1', '{"path":"b"}'),
      R.args('fc_1', { not: 'a string' }),
      ...R.end(),
    ]);
    expect(brief(message)).toEqual([
      ['call_fc_1', 'read', { path: 'a' }],
      ['call_fc_1', 'write', { path: 'b' }],
    ]);
  });

  it('gemini: calls split across chunks with conflicting names stay separate calls', () => {
    const { message } = feed('gemini', [
      G.parts([{ functionCall: { name: 'read', args: { path: 'a' } } }]),
      G.parts([{ functionCall: { name: 'write', args: { path: 'b' } } }]),
      G.parts([{ functionCall: { name: 'stream', willContinue: true } }]),
      G.parts([{ functionCall: { name: 'other', partialArgs: [{ jsonPath: '$.x', numberValue: 1 }] } }]),
      G.parts([], 'STOP'),
    ]);
    expect(calls(message).map((c) => [c.name, c.input])).toEqual([
      ['read', { path: 'a' }],
      ['write', { path: 'b' }],
      ['stream', {}],
      ['other', { x: 1 }],
    ]);
  });

  it('gemini: a partialArgs index far past the end is refused, not allocated', () => {
    const { message } = feed('gemini', [
      G.parts([{ functionCall: { name: 'f', willContinue: true } }]),
      G.parts([{ functionCall: { partialArgs: [{ jsonPath: '$.a[999999999]', numberValue: 1 }] } }]),
      G.parts([], 'STOP'),
    ]);
    const [call] = calls(message);
    expect(call?.input).toEqual({});
    expect(call?.providerData?.invalidArguments).toBeDefined();
  });
});

describe('hostile stream parsers: argument JSON', () => {
  /** One call whose arguments stream as `pieces`, on each surface, ending normally. */
  function callWith(api: ModelApi, pieces: string[]): Ev[] {
    switch (api) {
      case 'anthropic-messages':
        return [A.start(0, 'tu', 'f'), ...pieces.map((p) => A.args(0, p)), A.stop(0), ...A.end()];
      case 'openai-chat':
        return [
          C.call({ index: 0, id: 'c', function: { name: 'f', arguments: '' } }),
          ...pieces.map((p) => C.call({ index: 0, function: { arguments: p } })),
          ...C.end(),
        ];
      case 'openai-responses':
        return [R.added('fc', 'f'), ...pieces.map((p) => R.args('fc', p)), ...R.end()];
      case 'gemini':
        throw new Error('gemini sends arguments as an object');
    }
  }
  const TEXT_SURFACES: ModelApi[] = ['anthropic-messages', 'openai-chat', 'openai-responses'];

  it.each(TEXT_SURFACES)(
    '%s: invalid and truncated arguments keep input {} and record the raw text',
    (api) => {
      for (const raw of ['{"a":1', 'not json', '[1,2]', '{"a":1}{"b":2}']) {
        const { message, error } = feed(api, callWith(api, [raw]));
        expect(error).toBeUndefined();
        const [call] = calls(message);
        expect(call?.input).toEqual({});
        expect(call?.providerData?.invalidArguments).toMatchObject({ raw });
      }
    },
  );

  it.each(TEXT_SURFACES)(
    '%s: a call cut off by the end of the stream is dropped from the partial message',
    (api) => {
      const events = callWith(api, ['{"path":"a']).filter(
        ([e, d]) =>
          !['content_block_stop', 'message_delta', 'message_stop', 'response.completed'].includes(e) &&
          !(typeof d === 'object' && JSON.stringify(d).includes('finish_reason":"tool_calls')) &&
          d !== '[DONE]',
      );
      const { message, complete } = feed(api, events);
      expect(complete).toBe(false);
      expect(calls(message)).toEqual([]);
    },
  );

  it.each(TEXT_SURFACES)(
    '%s: 100k unclosed [ and 100k-deep closed nesting are invalid, not a crash',
    (api) => {
      const deep = `{"a":${'['.repeat(100_000)}1${']'.repeat(100_000)}}`;
      for (const raw of ['['.repeat(100_000), deep]) {
        const { message, error } = feed(api, callWith(api, [raw]));
        expect(error).toBeUndefined();
        const [call] = calls(message);
        expect(call?.input).toEqual({});
        expect(call?.providerData?.invalidArguments).toBeDefined();
        // What the conversation keeps must serialize again (JSON.stringify overflows the stack near 5000 levels).
        expect(() => JSON.stringify(message)).not.toThrow();
      }
    },
  );

  it('arguments nested exactly MAX_ARGUMENT_DEPTH levels are kept', () => {
    const raw = `${'{"a":'.repeat(MAX_ARGUMENT_DEPTH - 1)}{}${'}'.repeat(MAX_ARGUMENT_DEPTH - 1)}`;
    const [call] = calls(feed('openai-chat', callWith('openai-chat', [raw])).message);
    expect(call?.providerData?.invalidArguments).toBeUndefined();
    const deeper = `{"a":${raw}}`;
    const [call2] = calls(feed('openai-chat', callWith('openai-chat', [deeper])).message);
    expect(call2?.providerData?.invalidArguments).toMatchObject({ error: /nested deeper/ });
  });

  it('gemini: a 100k-deep args object is a ProviderError, not a stack overflow escaping', () => {
    const deep = `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}}]}}]}`;
    const out: StreamEvent[] = [];
    const parser = createStreamParser('gemini', (e) => out.push(e));
    let error: unknown;
    try {
      parser.accept({ event: 'message', data: deep, id: '' });
    } catch (err) {
      error = err;
    }
    if (error !== undefined) expect(error).toBeInstanceOf(ProviderError);
    else expect(calls(parser.partial('error'))).toEqual([]);
  });

  it.each([...TEXT_SURFACES, 'gemini' as const])(
    '%s: __proto__ and constructor keys stay own data, Object.prototype is untouched',
    (api) => {
      const raw = '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"x":1}';
      const events =
        api === 'gemini'
          ? [
              G.parts([{ functionCall: { name: 'f', args: JSON.parse(raw) } }]),
              G.parts([{ functionCall: { name: 'g', willContinue: true, args: JSON.parse(raw) } }]),
              G.parts([
                { functionCall: { partialArgs: [{ jsonPath: '$.__proto__.more', boolValue: true }] } },
              ]),
              G.parts([], 'STOP'),
            ]
          : callWith(api, [raw.slice(0, 10), raw.slice(10)]);
      // JSON.parse of the Gemini chunk: G.parts stringifies, so the own __proto__ key survives on the wire.
      const { message } = feed(api, events);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      for (const call of calls(message)) {
        expect(Object.getPrototypeOf(call.input)).toBe(Object.prototype);
        expect(Object.hasOwn(call.input, '__proto__')).toBe(true);
        expect(Object.getOwnPropertyDescriptor(call.input, '__proto__')?.value).toMatchObject({
          polluted: true,
        });
        expect(call.input.x).toBe(1);
      }
      expect(calls(message).length).toBe(api === 'gemini' ? 2 : 1);
    },
  );

  it.each(TEXT_SURFACES)('%s: 256 KiB of arguments in 1-byte deltas are assembled exactly', async (api) => {
    const value = 'v'.repeat(256 * 1024);
    const raw = JSON.stringify({ big: value });
    const pieces = [...raw];
    const { message } = feed(api, callWith(api, pieces));
    const [call] = calls(message);
    expect(String(call?.input.big).length).toBe(value.length);
  });

  it.each(TEXT_SURFACES)(
    '%s: 50 MB of arguments in 1 MiB deltas are assembled exactly',
    (api) => {
      const piece = 'w'.repeat(1024 * 1024);
      const pieces = ['{"big":"', ...Array.from({ length: 50 }, () => piece), '"}'];
      const [call] = calls(feed(api, callWith(api, pieces)).message);
      expect(String(call?.input.big).length).toBe(50 * piece.length);
    },
    60_000,
  );
});

// The shared wire-fixtures folder (PANTO_WIRE_FIXTURES, default ../shared/reference/wire-fixtures beside the repo).
const HAVE_FIXTURES = existsSync(join(fixturesDir(), 'streams'));

describe.skipIf(!HAVE_FIXTURES)('hostile stream parsers: recorded real streams, cut and corrupted', () => {
  const streams = HAVE_FIXTURES ? recordedStreams() : [];

  /** The SSE events of a body. */
  function eventsOf(body: string): Ev[] {
    const out: Ev[] = [];
    const sse = new SseParser((e) => out.push([e.event, e.data]));
    sse.push(body);
    sse.end();
    return out;
  }

  it('every recorded stream cut after each event gives a partial message without unfinished calls, or completes', () => {
    let cuts = 0;
    for (const s of streams) {
      const events = eventsOf(s.body);
      for (let n = 0; n <= events.length; n++) {
        const { error, message, complete } = feed(s.api, events.slice(0, n));
        if (error !== undefined) expect(error, s.name).toBeInstanceOf(ProviderError);
        if (!complete) {
          for (const call of calls(message)) expect(call.input, `${s.name} cut at ${n}`).toBeTypeOf('object');
        }
        expect(() => JSON.stringify(message)).not.toThrow();
        cuts++;
      }
    }
    expect(cuts).toBeGreaterThan(streams.length);
  });

  it('with bytes flipped in later events, the template fast path gives what a full parse of every event gives', () => {
    const make = (
      api: ModelApi,
      deltaTemplates: boolean,
      emit: (e: StreamEvent) => void,
    ): SurfaceStreamParser => {
      switch (api) {
        case 'anthropic-messages':
          return new AnthropicStreamParser(emit, { deltaTemplates });
        case 'openai-chat':
          return new OpenAIChatStreamParser(emit, { deltaTemplates });
        case 'openai-responses':
          return new OpenAIResponsesStreamParser(emit, { deltaTemplates });
        case 'gemini':
          return new GeminiStreamParser(emit, { deltaTemplates });
      }
    };
    const outcome = (api: ModelApi, events: Ev[], deltaTemplates: boolean) => {
      const out: StreamEvent[] = [];
      const parser = make(api, deltaTemplates, (e) => out.push(e));
      let error: string | undefined;
      try {
        for (const [event, data] of events) parser.accept({ event, data: data as string, id: '' });
      } catch (err) {
        expect(err).toBeInstanceOf(ProviderError);
        error = (err as Error).message;
      }
      const message = error === undefined && parser.complete ? parser.result() : parser.partial('error');
      return { out, error, message };
    };
    let seed = 777;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    // Flips that keep JSON valid-looking: inside strings, escapes, digits, quotes.
    const junk = ['"', '\\', '\\u00', '0', '9', '-', 'e', ',', '}', ' ', '\u2028', '\\n'];
    let compared = 0;
    for (const s of streams) {
      const clean = eventsOf(s.body);
      for (let round = 0; round < 20; round++) {
        // Leave the first half alone so templates are learned, then corrupt one later event.
        const at = Math.floor(clean.length / 2 + rand() * (clean.length / 2));
        const events = clean.map(([e, d], i): Ev => {
          const data = d as string;
          if (i !== at || data.length === 0) return [e, data];
          const pos = Math.floor(rand() * data.length);
          return [e, data.slice(0, pos) + junk[Math.floor(rand() * junk.length)] + data.slice(pos + 1)];
        });
        const fast = outcome(s.api, events, true);
        const full = outcome(s.api, events, false);
        expect(fast.error, `${s.name} round ${round}`).toEqual(full.error);
        expect(fast.message, `${s.name} round ${round}`).toEqual(full.message);
        expect(fast.out, `${s.name} round ${round}`).toEqual(full.out);
        compared++;
      }
    }
    expect(compared).toBe(streams.length * 20);
  });

  it('every recorded stream with one byte of each event flipped throws only ProviderError', () => {
    let seed = 12345;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const junk = ['"', '{', '}', '[', ']', ',', ':', '0', '-', 'n', '\\', 'e', ' '];
    for (const s of streams) {
      for (let round = 0; round < 5; round++) {
        const events = eventsOf(s.body).map(([e, d]): Ev => {
          const data = d as string;
          if (data.length === 0) return [e, data];
          const at = Math.floor(rand() * data.length);
          return [e, data.slice(0, at) + junk[Math.floor(rand() * junk.length)] + data.slice(at + 1)];
        });
        const { error, message } = feed(s.api, events);
        if (error !== undefined) expect(error, s.name).toBeInstanceOf(ProviderError);
        expect(() => JSON.stringify(message)).not.toThrow();
      }
    }
  });
});

describe('hostile stream parsers: Gemini streamed arguments', () => {
  it('a partialArgs path 10k levels deep is kept as invalid raw pieces, not a stack overflow', () => {
    const path = `$${'.a'.repeat(10_000)}`;
    const { message, error } = feed('gemini', [
      G.parts([{ functionCall: { name: 'f', willContinue: true } }]),
      G.parts([{ functionCall: { partialArgs: [{ jsonPath: path, numberValue: 1 }] } }]),
      G.parts([], 'STOP'),
    ]);
    expect(error).toBeUndefined();
    const [call] = calls(message);
    expect(call?.input).toEqual({});
    expect(call?.providerData?.invalidArguments).toBeDefined();
    expect(() => JSON.stringify(message)).not.toThrow();
  });
});

describe('hostile stream parsers: endless responses', () => {
  function refused(fn: () => void, api: string): ProviderError {
    let caught: unknown;
    try {
      fn();
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ProviderError);
    const error = caught as ProviderError;
    expect(error.retryable).toBe(false);
    expect(error.api).toBe(api);
    return error;
  }

  it('text, thinking and argument deltas past MAX_MESSAGE_CHARS in all are refused', () => {
    const piece = 'x'.repeat(16 * 1024 * 1024);
    const b = new MessageBuilder(() => {}, { api: 'openai-chat' });
    const error = refused(() => {
      for (let i = 0; i <= MAX_MESSAGE_CHARS / piece.length; i++) {
        if (i % 3 === 0) b.text('t', piece);
        else if (i % 3 === 1) b.thinking('r', piece);
        else {
          b.toolStart(`c${i}`, `c${i}`, 'f');
          b.toolArgs(`c${i}`, piece);
        }
      }
    }, 'openai-chat');
    expect(error.message).toMatch(/refusing to buffer/);
  });

  it('more than MAX_MESSAGE_BLOCKS blocks are refused', () => {
    const b = new MessageBuilder(() => {}, { api: 'gemini' });
    refused(() => {
      for (let i = 0; i <= MAX_MESSAGE_BLOCKS; i++) b.toolStart(`k${i}`, `id${i}`, 'f');
    }, 'gemini');
  });

  it('a parser stops a flood of tool calls with the ProviderError of its api', () => {
    const out: StreamEvent[] = [];
    const parser = createStreamParser('openai-chat', (e) => out.push(e));
    refused(() => {
      for (let i = 0; i <= MAX_MESSAGE_BLOCKS; i++) {
        parser.accept({
          event: 'message',
          data: `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":${i},"id":"c${i}","function":{"name":"f","arguments":"{}"}}]}}]}`,
          id: '',
        });
      }
    }, 'openai-chat');
  });
});
