/**
 * What a recorded stream yields, in one comparable shape: text, thinking, tool calls (id, name, parsed arguments),
 * usage and stop reason — from our real transport (`createProvider` with a fetch that answers with the recording) and
 * from each official SDK's own stream accumulator fed the same bytes through its own client and SSE decoder.
 */

import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import type { StopReason, Usage } from '../../src/conversation.js';
import { createProvider } from '../../src/providers/http-provider.js';
import type { ModelApi } from '../../src/providers/model/model-info.js';
import type { RecordedStream } from './wire-fixtures.js';

export interface OutcomeCall {
  id: string;
  name: string;
  input: unknown;
}

export type Outcome =
  | {
      kind: 'message';
      text: string;
      thinking: string;
      toolCalls: OutcomeCall[];
      /** Cache fields that are 0 are left out on both sides. */
      usage: Usage | undefined;
      stopReason: StopReason;
    }
  | { kind: 'error'; message: string };

/** Bytes of `body` in fixed 61-byte pieces, so SSE lines and UTF-8 sequences are split across reads. */
function recordingFetch(body: string): typeof fetch {
  const bytes = new TextEncoder().encode(body);
  return async () => {
    let offset = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= bytes.length) {
          controller.close();
          return;
        }
        controller.enqueue(bytes.slice(offset, offset + 61));
        offset += 61;
      },
    });
    return new Response(stream, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  };
}

export function normalizeUsage(usage: Usage | undefined): Usage | undefined {
  if (usage === undefined) return undefined;
  const out: Usage = { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens };
  if (usage.cacheReadTokens) out.cacheReadTokens = usage.cacheReadTokens;
  if (usage.cacheWriteTokens) out.cacheWriteTokens = usage.cacheWriteTokens;
  return out;
}

/** The recording through `createProvider(...).stream` (no retries: a recording answers the same every time). */
export async function ourOutcome(stream: RecordedStream): Promise<Outcome> {
  const provider = createProvider({
    api: stream.api,
    baseUrl: 'http://recording.invalid/v1',
    apiKey: 'recording',
    fetch: recordingFetch(stream.body),
    retry: { maxAttempts: 1 },
    idleTimeoutMs: 5_000,
  });
  for await (const event of provider.stream({ model: 'recorded-model', body: {} })) {
    if (event.type === 'error') return { kind: 'error', message: event.error.message };
    if (event.type !== 'done') continue;
    const m = event.message;
    let text = '';
    let thinking = '';
    const toolCalls: OutcomeCall[] = [];
    for (const block of m.content) {
      if (block.type === 'text') text += block.text;
      else if (block.type === 'thinking') thinking += block.text;
      else toolCalls.push({ id: block.id, name: block.name, input: block.input });
    }
    return {
      kind: 'message',
      text,
      thinking,
      toolCalls,
      usage: normalizeUsage(m.usage),
      stopReason: m.stopReason ?? 'end',
    };
  }
  return { kind: 'error', message: 'no terminal event' };
}

/** JSON arguments as the SDKs leave them (a string), parsed the way a caller would; `{}` for empty or non-object. */
function parsedArguments(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw ?? {};
  if (raw.trim() === '') return {};
  try {
    const v: unknown = JSON.parse(raw);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/** `stopReason` when the message called tools and the provider still said it ended normally (our documented rule). */
function promote(stop: StopReason, calls: number): StopReason {
  return calls > 0 && (stop === 'end' || stop === 'other') ? 'tool_use' : stop;
}

async function anthropicSdk(stream: RecordedStream): Promise<Outcome> {
  const client = new Anthropic({
    apiKey: 'recording',
    baseURL: 'http://recording.invalid',
    fetch: recordingFetch(stream.body),
    maxRetries: 0,
  });
  const message = await client.messages
    .stream({ model: 'recorded-model', max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }] })
    .finalMessage();
  let text = '';
  let thinking = '';
  const toolCalls: OutcomeCall[] = [];
  for (const block of message.content) {
    if (block.type === 'text') text += block.text;
    else if (block.type === 'thinking') thinking += block.thinking;
    else if (block.type === 'tool_use')
      toolCalls.push({ id: block.id, name: block.name, input: block.input });
  }
  const stopMap: Record<string, StopReason> = {
    end_turn: 'end',
    stop_sequence: 'end',
    tool_use: 'tool_use',
    max_tokens: 'max_tokens',
    model_context_window_exceeded: 'max_tokens',
    refusal: 'refusal',
  };
  const u = message.usage;
  return {
    kind: 'message',
    text,
    thinking,
    toolCalls,
    usage: normalizeUsage({
      inputTokens: u.input_tokens,
      outputTokens: u.output_tokens,
      cacheReadTokens: u.cache_read_input_tokens ?? 0,
      cacheWriteTokens: u.cache_creation_input_tokens ?? 0,
    }),
    stopReason: promote(stopMap[message.stop_reason ?? ''] ?? 'other', toolCalls.length),
  };
}

function openai(stream: RecordedStream): OpenAI {
  return new OpenAI({
    apiKey: 'recording',
    baseURL: 'http://recording.invalid/v1',
    fetch: recordingFetch(stream.body),
    maxRetries: 0,
  });
}

async function chatSdk(stream: RecordedStream): Promise<Outcome> {
  const completion = await openai(stream)
    .chat.completions.stream({ model: 'recorded-model', messages: [{ role: 'user', content: 'hi' }] })
    .finalChatCompletion();
  const choice = completion.choices[0];
  const message = choice?.message;
  const refusal = message?.refusal ?? '';
  const toolCalls: OutcomeCall[] = (message?.tool_calls ?? []).flatMap((c) =>
    c.type === 'function'
      ? [{ id: c.id, name: c.function.name, input: parsedArguments(c.function.arguments) }]
      : [],
  );
  const finishMap: Record<string, StopReason> = {
    stop: 'end',
    length: 'max_tokens',
    tool_calls: 'tool_use',
    function_call: 'tool_use',
    content_filter: 'refusal',
  };
  const finish = choice?.finish_reason;
  const stop: StopReason =
    refusal !== '' ? 'refusal' : (finishMap[finish ?? ''] ?? (finish ? 'other' : 'end'));
  const u = completion.usage;
  const cached = u?.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    kind: 'message',
    text: (message?.content ?? '') + refusal,
    // The SDK keeps the non-standard `reasoning_content` / `reasoning` delta fields on the message.
    thinking: reasoningOf(message),
    toolCalls,
    usage: u
      ? normalizeUsage({
          inputTokens: Math.max(0, u.prompt_tokens - cached),
          outputTokens: u.completion_tokens,
          cacheReadTokens: cached,
        })
      : undefined,
    stopReason: promote(stop, toolCalls.length),
  };
}

function reasoningOf(message: unknown): string {
  const m = (message ?? {}) as { reasoning_content?: unknown; reasoning?: unknown };
  const r = m.reasoning_content ?? m.reasoning;
  return typeof r === 'string' ? r : '';
}

async function responsesSdk(stream: RecordedStream): Promise<Outcome> {
  const response = await openai(stream)
    .responses.stream({ model: 'recorded-model', input: 'hi' })
    .finalResponse();
  let text = '';
  let thinking = '';
  let refused = false;
  const toolCalls: OutcomeCall[] = [];
  for (const item of response.output) {
    if (item.type === 'message') {
      for (const c of item.content) {
        if (c.type === 'output_text') text += c.text;
        else if (c.type === 'refusal') {
          text += c.refusal;
          refused = true;
        }
      }
    } else if (item.type === 'reasoning') {
      // Our convention (documented in openai-responses-stream.ts): summary parts are paragraphs, joined by a blank line;
      // raw reasoning text (`content[].reasoning_text`, sent by open-weight servers) is taken as it streamed.
      thinking += item.summary.map((s) => s.text).join('\n\n');
      for (const c of item.content ?? []) if (c.type === 'reasoning_text') thinking += c.text;
    } else if (item.type === 'function_call') {
      toolCalls.push({ id: item.call_id, name: item.name, input: parsedArguments(item.arguments) });
    }
  }
  let stop: StopReason = refused ? 'refusal' : 'end';
  if (response.status === 'incomplete') {
    const reason = response.incomplete_details?.reason;
    stop = reason === 'max_output_tokens' ? 'max_tokens' : reason === 'content_filter' ? 'refusal' : 'other';
  }
  const u = response.usage;
  const cached = u?.input_tokens_details?.cached_tokens ?? 0;
  return {
    kind: 'message',
    text,
    thinking,
    toolCalls,
    usage: u
      ? normalizeUsage({
          inputTokens: Math.max(0, u.input_tokens - cached),
          outputTokens: u.output_tokens,
          cacheReadTokens: cached,
        })
      : undefined,
    stopReason: promote(stop, toolCalls.length),
  };
}

/** Marks a Gemini call the SDK reports without an id; followed by the response id. */
export const NO_ID = '(no id) ';

/**
 * Gemini calls without an id: we give them `gemini_<responseId>_<n>` (`syntheticId`), the SDK leaves them without one.
 * The expectation takes our id when it has exactly that form for the response that carried the call.
 */
export function reconcileSyntheticIds(expected: Outcome, ours: Outcome): Outcome {
  if (expected.kind !== 'message' || ours.kind !== 'message') return expected;
  const toolCalls = expected.toolCalls.map((call, i) => {
    if (!call.id.startsWith(NO_ID)) return call;
    const responseId = call.id.slice(NO_ID.length).replace(/[^a-zA-Z0-9_-]/g, '');
    const mine = ours.toolCalls[i]?.id ?? '';
    return new RegExp(`^gemini_${responseId}_\\d+$`).test(mine) ? { ...call, id: mine } : call;
  });
  return { ...expected, toolCalls };
}

async function geminiSdk(stream: RecordedStream): Promise<Outcome> {
  const ai = new GoogleGenAI({
    apiKey: 'recording',
    httpOptions: { baseUrl: 'http://recording.invalid', fetch: recordingFetch(stream.body) },
  });
  let text = '';
  let thinking = '';
  const toolCalls: OutcomeCall[] = [];
  let usage: Usage | undefined;
  let finish: string | undefined;
  let blocked: string | undefined;
  let responseId = '';
  const warn = console.warn;
  // The `text` getter warns about non-text parts on every chunk that has them; the getters are what is compared.
  console.warn = () => {};
  try {
    for await (const chunk of await ai.models.generateContentStream({
      model: 'recorded-model',
      contents: 'hi',
    })) {
      if (chunk.responseId) responseId = chunk.responseId;
      text += chunk.text ?? '';
      for (const part of chunk.candidates?.[0]?.content?.parts ?? []) {
        if (part.thought === true && typeof part.text === 'string') thinking += part.text;
      }
      for (const call of chunk.functionCalls ?? []) {
        // A call without an id gets `gemini_<responseId>_<block index>` from us (see `reconcileSyntheticIds`).
        toolCalls.push({
          id: call.id ?? `${NO_ID}${responseId}`,
          name: call.name ?? '',
          input: call.args ?? {},
        });
      }
      const u = chunk.usageMetadata;
      if (u) {
        const cached = u.cachedContentTokenCount ?? 0;
        usage = normalizeUsage({
          inputTokens: Math.max(0, (u.promptTokenCount ?? 0) + (u.toolUsePromptTokenCount ?? 0) - cached),
          outputTokens: (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0),
          cacheReadTokens: cached,
        });
      }
      const reason = chunk.candidates?.[0]?.finishReason;
      if (reason) finish = reason;
      if (chunk.promptFeedback?.blockReason) blocked = chunk.promptFeedback.blockReason;
    }
  } finally {
    console.warn = warn;
  }
  const refusals = ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY'];
  const errors = ['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL', 'MISSING_THOUGHT_SIGNATURE'];
  let stop: StopReason = 'end';
  if (blocked !== undefined || refusals.includes(finish ?? '')) stop = 'refusal';
  else if (finish === 'MAX_TOKENS') stop = 'max_tokens';
  else if (errors.includes(finish ?? '')) stop = 'error';
  else if (finish !== undefined && finish !== 'STOP') stop = 'other';
  return { kind: 'message', text, thinking, toolCalls, usage, stopReason: promote(stop, toolCalls.length) };
}

const SDKS: Record<ModelApi, (stream: RecordedStream) => Promise<Outcome>> = {
  'anthropic-messages': anthropicSdk,
  'openai-chat': chatSdk,
  'openai-responses': responsesSdk,
  gemini: geminiSdk,
};

/** What the official SDK's accumulator makes of the recording; `error` when the SDK itself throws. */
export async function sdkOutcome(stream: RecordedStream): Promise<Outcome> {
  try {
    return await SDKS[stream.api](stream);
  } catch (err) {
    return { kind: 'error', message: err instanceof Error ? err.message : String(err) };
  }
}
