/**
 * Regression cases found by `test/fuzz/fuzz-streams.mjs`, shrunk by hand: each is the hostile input the fuzzer met and
 * the invariant it broke (a thrown RangeError / TypeError instead of a typed `ProviderError`). Every case goes through
 * the SSE parser and the surface parser as the transport drives them.
 */
import { describe, expect, it } from 'vitest';
import { PantoError } from '../../src/errors.js';
import { createStreamParser } from '../../src/providers/create-stream-parser.js';
import type { ModelApi } from '../../src/providers/model/model-info.js';
import { SseParser } from '../../src/providers/transport/sse-parser.js';

/** Parse `body`; the thrown value (if any) and the message (finished or partial). */
function parse(api: ModelApi, body: string) {
  const parser = createStreamParser(api, () => {});
  const sse = new SseParser((e) => parser.accept(e), { api });
  try {
    sse.push(body);
    sse.end();
    return { thrown: undefined, complete: parser.complete, message: parser.result() };
  } catch (err) {
    return { thrown: err, complete: parser.complete, message: parser.partial('error') };
  }
}

const DEEP_ARRAY = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
const DEEP_OBJECT = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
const TO_STRING = '{"toString":1}';

describe('fuzz findings: hostile values quoted or used as ids', () => {
  it('anthropic: a content_block_delta index nested 10k deep is a typed error, not a RangeError', () => {
    // Seed 1, case 850240783 (mutations duplicateEvent, hostileValue).
    const { thrown } = parse(
      'anthropic-messages',
      `event: content_block_delta\ndata: {"type":"content_block_delta","index":${DEEP_ARRAY},"delta":{"type":"text_delta","text":"x"}}\n\n`,
    );
    expect(thrown).toBeInstanceOf(PantoError);
    expect((thrown as PantoError).code).toBe('ERR_PROVIDER');
    expect((thrown as Error).message).toMatch(/has index \[unprintable value\], not a number/);
  });

  it('anthropic: an index object with a toString member is quoted, not called', () => {
    const { thrown } = parse(
      'anthropic-messages',
      `data: {"type":"content_block_stop","index":${TO_STRING}}\n\n`,
    );
    expect((thrown as PantoError).code).toBe('ERR_PROVIDER');
  });

  it.each([
    ['anthropic-messages', `event: error\ndata: {"type":"error","error":{"message":${DEEP_OBJECT}}}\n\n`],
    ['openai-chat', `data: {"error":{"message":${DEEP_ARRAY}}}\n\n`],
    ['openai-chat', `data: {"error":${DEEP_ARRAY}}\n\n`],
    ['gemini', `data: {"error":{"message":${DEEP_OBJECT}}}\n\n`],
  ] as const)('%s: an error event whose message is nested 10k deep is a typed ProviderError', (api, body) => {
    const { thrown } = parse(api, body);
    expect(thrown).toBeInstanceOf(PantoError);
    expect((thrown as PantoError).code).toBe('ERR_PROVIDER');
  });

  it('anthropic: a tool_use block whose id and name are objects with toString members', () => {
    const { thrown, message } = parse(
      'anthropic-messages',
      `data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":${TO_STRING},"name":[${TO_STRING}],"input":{}}}\n\n` +
        'data: {"type":"content_block_stop","index":0}\n\ndata: {"type":"message_stop"}\n\n',
    );
    expect(thrown).toBeUndefined();
    expect(message.content).toEqual([
      // A non-string id counts as missing (see non-string-ids.test.ts): synthesised, never `[object Object]`.
      { type: 'tool_call', id: 'call_1', name: '[array]', input: {} },
    ]);
  });

  it.each([
    [
      'response.output_text.delta',
      `{"type":"response.output_text.delta","item_id":${TO_STRING},"delta":"x"}`,
    ],
    [
      'response.output_item.added',
      `{"type":"response.output_item.added","item":{"type":"function_call","id":${TO_STRING},"call_id":[${TO_STRING}],"name":${TO_STRING}}}`,
    ],
    [
      'response.output_item.done',
      `{"type":"response.output_item.done","item":{"type":"reasoning","id":${TO_STRING},"summary":[{"text":${TO_STRING}}]}}`,
    ],
    [
      'response.function_call_arguments.done',
      `{"type":"response.function_call_arguments.done","item_id":${DEEP_ARRAY},"arguments":"{}"}`,
    ],
  ] as const)('openai-responses: %s with object ids is read, not a TypeError', (event, data) => {
    const { thrown } = parse(
      'openai-responses',
      `event: ${event}\ndata: ${data}\n\nevent: response.completed\ndata: {"type":"response.completed","response":{"status":"completed"}}\n\n`,
    );
    expect(thrown).toBeUndefined();
  });
});

describe('fuzz findings: usage counts the wire reports', () => {
  it('anthropic: negative, fractional and huge token counts become non-negative safe integers', () => {
    // Found by test/fuzz/fuzz-agent.mjs (the agent cleans usage before storing; a direct stream user saw raw values).
    const { thrown, message } = parse(
      'anthropic-messages',
      [
        'event: message_start',
        'data: {"type":"message_start","message":{"id":"m","model":"x","usage":{"input_tokens":-5,"output_tokens":1.5}}}',
        '',
        'event: message_delta',
        'data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1e300,"cache_read_input_tokens":-1}}',
        '',
        'event: message_stop',
        'data: {"type":"message_stop"}',
        '',
        '',
      ].join('\n'),
    );
    expect(thrown).toBeUndefined();
    expect(message.usage).toMatchObject({
      inputTokens: 0,
      outputTokens: Number.MAX_SAFE_INTEGER,
      cacheReadTokens: 0,
    });
  });
});
