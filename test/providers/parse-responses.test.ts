import { describe, expect, it } from 'vitest';
import { isPantoError } from '../../src/errors.js';
import { parseAnthropicResponse } from '../../src/providers/anthropic-messages/anthropic-response.js';
import { parseGeminiResponse } from '../../src/providers/gemini/gemini-response.js';
import { parseOpenAIChatResponse } from '../../src/providers/openai-chat/openai-chat-response.js';
import {
  parseOpenAIResponsesResponse,
  reasoningSignature,
} from '../../src/providers/openai-responses/openai-responses-response.js';
import * as anthropic from '../fixtures/providers/responses/anthropic-messages.js';
import * as gemini from '../fixtures/providers/responses/gemini.js';
import * as chat from '../fixtures/providers/responses/openai-chat.js';
import * as responses from '../fixtures/providers/responses/openai-responses.js';

/** Parse the fixture as it arrives on the wire: JSON text. */
function wire(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

/** The first call every fixture makes: read a.png, with a nested range argument. */
function readA(id: string, providerData?: Record<string, unknown>) {
  return {
    type: 'tool_call',
    id,
    name: 'read',
    input: { path: 'a.png', range: { start: 1, end: 20 } },
    ...(providerData === undefined ? {} : { providerData }),
  };
}

function expectProviderError(fn: () => unknown, message: RegExp): void {
  try {
    fn();
  } catch (err) {
    expect(isPantoError(err, 'ERR_PROVIDER')).toBe(true);
    expect((err as Error).message).toMatch(message);
    return;
  }
  throw new Error('expected a PantoError ERR_PROVIDER');
}

describe('parseAnthropicResponse', () => {
  it('reads thinking, redacted thinking, text, tool calls with JSON input, usage and stop reason', () => {
    expect(parseAnthropicResponse(wire(anthropic.toolUse))).toEqual({
      role: 'assistant',
      model: 'claude-sonnet-4-5-20250929',
      stopReason: 'tool_use',
      content: [
        { type: 'thinking', text: 'The user wants both files.', signature: 'sig-abc' },
        { type: 'thinking', text: '', signature: 'opaque-redacted', redacted: true },
        { type: 'text', text: 'Reading both files.' },
        readA('toolu_01'),
        { type: 'tool_call', id: 'toolu_02', name: 'read', input: { path: 'b.pdf' } },
      ],
      usage: { inputTokens: 35, outputTokens: 210, cacheReadTokens: 2048, cacheWriteTokens: 120 },
    });
  });

  it('maps stop reasons', () => {
    expect(parseAnthropicResponse(wire(anthropic.endTurn)).stopReason).toBe('end');
    expect(parseAnthropicResponse(wire(anthropic.maxTokens)).stopReason).toBe('max_tokens');
    expect(parseAnthropicResponse(wire(anthropic.refusal)).stopReason).toBe('refusal');
  });

  it('throws ERR_PROVIDER for an error body or a non-message', () => {
    const error = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
    expectProviderError(() => parseAnthropicResponse(error), /Overloaded/);
    expectProviderError(() => parseAnthropicResponse('nope'), /no content array/);
  });
});

describe('parseOpenAIChatResponse', () => {
  it('reads text, tool calls (invalid JSON kept as providerData), cached usage and stop reason', () => {
    expect(parseOpenAIChatResponse(wire(chat.toolCalls))).toEqual({
      role: 'assistant',
      model: 'gpt-4.1-2025-04-14',
      stopReason: 'tool_use',
      content: [
        { type: 'text', text: 'Reading both files.' },
        readA('call_A'),
        {
          type: 'tool_call',
          id: 'call_B',
          name: 'read',
          input: {},
          providerData: { invalidArguments: { raw: '{"path": "b.pdf"', error: expect.any(String) } },
        },
      ],
      usage: { inputTokens: 232, outputTokens: 50, cacheReadTokens: 768 },
    });
  });

  it('maps length to max_tokens and a refusal to refusal text', () => {
    const cut = parseOpenAIChatResponse(wire(chat.text));
    expect(cut.stopReason).toBe('max_tokens');
    expect(cut.usage).toEqual({ inputTokens: 12, outputTokens: 3 });
    const refused = parseOpenAIChatResponse(wire(chat.refusal));
    expect(refused.stopReason).toBe('refusal');
    expect(refused.content).toEqual([{ type: 'text', text: 'I cannot help with that.' }]);
  });

  it('says tool_use when a compatible server reports stop for a turn that calls tools', () => {
    const body = wire(chat.toolCalls) as { choices: Array<{ finish_reason: string }> };
    (body.choices[0] as { finish_reason: string }).finish_reason = 'stop';
    expect(parseOpenAIChatResponse(body).stopReason).toBe('tool_use');
  });

  it('gives an id-less call `call_<n>` and takes an argument object as is (Ollama), as the stream parser does', () => {
    const message = parseOpenAIChatResponse({
      model: 'llama3.2',
      choices: [
        {
          index: 0,
          finish_reason: 'stop',
          message: {
            role: 'assistant',
            content: '',
            tool_calls: [
              { function: { name: 'read', arguments: { path: 'a.png' } } },
              { function: { name: 'read', arguments: '{"path":"b.pdf"}' } },
            ],
          },
        },
      ],
    });
    expect(message.stopReason).toBe('tool_use');
    expect(message.content).toEqual([
      { type: 'tool_call', id: 'call_1', name: 'read', input: { path: 'a.png' } },
      { type: 'tool_call', id: 'call_2', name: 'read', input: { path: 'b.pdf' } },
    ]);
  });

  it('throws ERR_PROVIDER for an error body', () => {
    expectProviderError(
      () => parseOpenAIChatResponse({ error: { message: 'Invalid image' } }),
      /Invalid image/,
    );
  });
});

describe('parseOpenAIResponsesResponse', () => {
  it('reads reasoning (echo signature), text, function calls, usage and stop reason', () => {
    expect(parseOpenAIResponsesResponse(wire(responses.toolCalls))).toEqual({
      role: 'assistant',
      model: 'gpt-5-2025-08-07',
      stopReason: 'tool_use',
      content: [
        {
          type: 'thinking',
          text: 'Need both files.\n\nRead them in parallel.',
          signature: reasoningSignature('rs_1', 'gAAAA-opaque'),
        },
        { type: 'text', text: 'Reading both files.' },
        readA('call_A'),
        {
          type: 'tool_call',
          id: 'call_B',
          name: 'read',
          input: {},
          providerData: { invalidArguments: { raw: '[1,2]', error: 'arguments are not a JSON object' } },
        },
      ],
      usage: { inputTokens: 488, outputTokens: 80, cacheReadTokens: 512 },
    });
  });

  it('maps incomplete, failed and refusal', () => {
    expect(parseOpenAIResponsesResponse(wire(responses.incomplete)).stopReason).toBe('max_tokens');
    const failed = parseOpenAIResponsesResponse(wire(responses.failed));
    expect(failed.stopReason).toBe('error');
    expect(failed.errorMessage).toBe('The model failed to generate a response.');
    expect(parseOpenAIResponsesResponse(wire(responses.refusal)).stopReason).toBe('refusal');
  });

  it('throws ERR_PROVIDER for an error body', () => {
    expectProviderError(() => parseOpenAIResponsesResponse({ error: { message: 'bad input' } }), /bad input/);
  });
});

describe('parseGeminiResponse', () => {
  it('reads thoughts, text, function calls (signature, synthesised id), usage and stop reason', () => {
    expect(parseGeminiResponse(wire(gemini.functionCalls))).toEqual({
      role: 'assistant',
      model: 'gemini-3-pro-preview',
      stopReason: 'tool_use',
      content: [
        { type: 'thinking', text: 'The user wants both files.', signature: 'c2lnLXRob3VnaHQ=' },
        { type: 'text', text: 'Reading both files.' },
        readA('gemini_resp-9x_2', { thoughtSignature: 'c2lnLWNhbGw=', syntheticId: true }),
        { type: 'tool_call', id: 'fc-7', name: 'read', input: { path: 'b.pdf' } },
      ],
      usage: { inputTokens: 200, outputTokens: 100, cacheReadTokens: 1000 },
    });
  });

  it('maps MAX_TOKENS, safety finishes, a malformed call and a blocked prompt', () => {
    expect(parseGeminiResponse(wire(gemini.maxTokens)).stopReason).toBe('max_tokens');
    expect(parseGeminiResponse(wire(gemini.safety)).stopReason).toBe('refusal');
    const malformed = parseGeminiResponse(wire(gemini.malformedCall));
    expect(malformed.stopReason).toBe('error');
    expect(malformed.errorMessage).toBe('Malformed function call: read(path=');
    const blocked = parseGeminiResponse(wire(gemini.blockedPrompt));
    expect(blocked.stopReason).toBe('refusal');
    expect(blocked.errorMessage).toBe('prompt blocked: PROHIBITED_CONTENT');
  });

  it('throws ERR_PROVIDER for an error body', () => {
    expectProviderError(
      () => parseGeminiResponse({ error: { code: 400, message: 'Request payload size exceeds the limit' } }),
      /payload size/,
    );
  });
});

describe('usage counts in a hostile body: every count a non-negative safe integer', () => {
  const isCount = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;

  it('Anthropic cache counts go through the same cleaning as input/output (-5, 1e300, 1.5)', () => {
    const message = parseAnthropicResponse({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: 'ok' }],
      stop_reason: 'end_turn',
      usage: {
        input_tokens: 1.5,
        output_tokens: 1,
        cache_read_input_tokens: -5,
        cache_creation_input_tokens: 1e300,
      },
    });
    expect(message.usage).toEqual({
      inputTokens: 1,
      outputTokens: 1,
      cacheReadTokens: 0,
      cacheWriteTokens: Number.MAX_SAFE_INTEGER,
    });
  });

  it('Gemini sums of two huge counts stop at Number.MAX_SAFE_INTEGER', () => {
    const message = parseGeminiResponse({
      candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP' }],
      usageMetadata: {
        promptTokenCount: 1e300,
        toolUsePromptTokenCount: 1e300,
        candidatesTokenCount: 1e300,
        thoughtsTokenCount: 1e300,
      },
    });
    expect(message.usage).toEqual({
      inputTokens: Number.MAX_SAFE_INTEGER,
      outputTokens: Number.MAX_SAFE_INTEGER,
    });
    for (const v of Object.values(message.usage ?? {})) expect(isCount(v)).toBe(true);
  });
});

describe('hostile values in a whole response (fuzz-streams whole-response cases, seed 7)', () => {
  const TO_STRING = { toString: 1 };
  const deep = (levels: number, leaf: unknown): unknown => {
    let v = leaf;
    for (let i = 0; i < levels; i++) v = [v];
    return v;
  };
  const deepObject = (levels: number): Record<string, unknown> => {
    let v: Record<string, unknown> = {};
    for (let i = 0; i < levels; i++) v = { a: v };
    return v;
  };
  const call = (name: unknown, args: unknown = '{}') => ({
    choices: [
      {
        message: {
          role: 'assistant',
          tool_calls: [{ id: 'c1', type: 'function', function: { name, arguments: args } }],
        },
        finish_reason: 'tool_calls',
      },
    ],
  });

  it('names and texts that are objects with a toString member, or arrays nested past the stack, are quoted safely', () => {
    expect(parseOpenAIChatResponse(call(TO_STRING)).content).toEqual([
      { type: 'tool_call', id: 'c1', name: '[object Object]', input: {} },
    ]);
    const gemini = (name: unknown) =>
      parseGeminiResponse({
        candidates: [{ content: { role: 'model', parts: [{ functionCall: { id: 'f', name, args: {} } }] } }],
      });
    expect(gemini(TO_STRING).content).toMatchObject([{ type: 'tool_call', name: '[object Object]' }]);
    expect(gemini(deep(20_000, 'x')).content).toMatchObject([{ type: 'tool_call', name: '[array]' }]);
    expect(
      parseAnthropicResponse({ type: 'message', content: [{ type: 'redacted_thinking', data: TO_STRING }] })
        .content,
    ).toEqual([{ type: 'thinking', text: '', signature: '[object Object]', redacted: true }]);
    expectProviderError(
      () => parseAnthropicResponse({ type: 'error', error: { message: TO_STRING } }),
      /object/,
    );
    expectProviderError(() => parseOpenAIChatResponse({ error: { message: TO_STRING } }), /object/);
    expectProviderError(() => parseGeminiResponse({ error: { message: TO_STRING } }), /object/);
    expectProviderError(() => parseOpenAIResponsesResponse({ error: { message: TO_STRING } }), /object/);
    const failed = parseOpenAIResponsesResponse({
      status: 'failed',
      output: [],
      error: { message: TO_STRING },
    });
    expect(failed.errorMessage).toBe('[object Object]');
  });

  it('Chat arguments sent as an object nested past the stack: ERR_PROVIDER, not a RangeError', () => {
    expectProviderError(() => parseOpenAIChatResponse(call('read', deepObject(20_000))), /deep|nest/i);
  });
});
