/**
 * OpenAI Chat Completions streaming parser (https://platform.openai.com/docs/api-reference/chat-streaming; chunk type
 * `ChatCompletionChunk` in openai `resources/chat/completions/completions.d.ts`), also used for OpenAI-compatible
 * servers (llama.cpp, vLLM, Ollama, OpenRouter, DeepSeek...).
 *
 * Each `data:` is a chunk; `data: [DONE]` ends the stream. Only choice 0 is read. Tool calls arrive as
 * `delta.tool_calls[{index, id?, function:{name?, arguments?}}]` fragments keyed by `index`; the usage chunk (when
 * `stream_options.include_usage` is set) has `choices: []`. Reasoning text from compatible servers
 * (`delta.reasoning_content` — DeepSeek, llama.cpp, vLLM; `delta.reasoning` — OpenRouter, Ollama) becomes thinking.
 * `delta.refusal` is text and ends the turn as `refusal`. Finish reasons and usage map as in `parseOpenAIChatResponse`.
 * An `{error:{...}}` chunk (sent by several compatible servers mid-stream) is thrown as a `ProviderError`.
 */

import type { AssistantMessage, StopReason } from '../../conversation.js';
import { argumentsJson } from '../common/argument-depth.js';
import { DeltaTemplateSet } from '../common/delta-template.js';
import { MessageBuilder } from '../common/message-builder.js';
import { asObject } from '../common/response-common.js';
import { safeJson, safeString } from '../common/safe-string.js';
import type { StreamEvent } from '../common/stream-event.js';
import {
  isDoneSentinel,
  parseJsonData,
  type StreamParserOptions,
  type SurfaceStreamParser,
} from '../common/surface-parser.js';
import { ProviderError } from '../transport/provider-error.js';
import type { SseEvent } from '../transport/sse-parser.js';
import { mapOpenAIChatFinishReason, openAIChatUsage } from './openai-chat-response.js';

const API = 'openai-chat';

type Json = Record<string, unknown>;

export class OpenAIChatStreamParser implements SurfaceStreamParser {
  readonly builder: MessageBuilder;
  #done = false;
  #finished = false;
  /** A usage chunk arrived with or after the finish reason. */
  #usageAfterFinish = false;
  #stopReason: StopReason | undefined;
  #refused = false;
  #callSeq = 0;
  #lastToolKey: string | undefined;
  /** The id the server gave the call open under each key (a different id at the same key is a new call). */
  readonly #givenIds = new Map<string, string>();
  /** Learned shapes of plain text chunks (most chunks of a stream), applied without a full parse. */
  readonly #templates = new DeltaTemplateSet<true>();

  constructor(emit: (event: StreamEvent) => void, options: StreamParserOptions = {}) {
    this.builder = new MessageBuilder(emit, { api: API });
    if (options.deltaTemplates === false) this.#templates.disable();
  }

  /** `[DONE]` seen, or a finish reason (some compatible servers close without `[DONE]`). */
  get complete(): boolean {
    return this.#done || this.#finished;
  }

  /**
   * `[DONE]` seen, or a usage chunk at or after the finish reason (the last chunk before `[DONE]` on real servers).
   * A finish reason alone does not end the stream: the `stream_options.include_usage` chunk comes after it. A server
   * that sends neither is ended by the transport a grace period after the finish reason (`finishGraceMs`).
   */
  get ended(): boolean {
    return this.#done || this.#usageAfterFinish;
  }

  accept(event: SseEvent): void {
    const raw = event.data;
    if (isDoneSentinel(raw)) {
      this.#done = true;
      return;
    }
    if (this.#templates.match(raw)) {
      // Same chunk as a learned plain-text one but for the text: the same model, no usage, no finish reason.
      if (this.#templates.value.length > 0) this.#usageAfterFinish = false;
      this.#content(this.#templates.value);
      return;
    }
    const chunk = parseJsonData(API, raw);
    if (chunk.error !== undefined && chunk.error !== null) throw chatStreamError(chunk.error);
    // The first chunk of some compatible servers says `model: ""`; a later chunk names the model.
    if (typeof chunk.model === 'string' && chunk.model !== '' && this.builder.model === undefined)
      this.builder.model = chunk.model;
    const choice = Array.isArray(chunk.choices) ? asObject(chunk.choices[0]) : undefined;
    if (choice) this.#choice(choice);
    const usage = chunk.usage as Json | null | undefined;
    if (usage && typeof usage === 'object') {
      this.builder.setUsage(openAIChatUsage(usage));
      if (this.#finished) this.#usageAfterFinish = true;
    } else if (choice && isPlainText(chunk, choice)) {
      // Learn this shape so the next text chunks skip the full parse (see delta-template.ts).
      this.#templates.learn(raw, 'content', plainTextOf, true);
    }
  }

  result(): AssistantMessage {
    // A refusal ends as `refusal` whatever the finish reason, as in `parseOpenAIChatResponse`.
    let stop = this.#refused ? 'refusal' : (this.#stopReason ?? 'end');
    // Several compatible servers report `stop` for a turn that called tools.
    if (this.builder.toolCallCount > 0 && (stop === 'end' || stop === 'other')) stop = 'tool_use';
    return this.builder.build(stop);
  }

  partial(stopReason: 'error' | 'aborted', errorMessage?: string): AssistantMessage {
    return this.builder.build(stopReason, errorMessage);
  }

  #choice(choice: Json): void {
    const delta = choice.delta as Json | undefined;
    // Content without a finish reason after one: the server sent that finish reason early, the stream goes on.
    if (delta && typeof choice.finish_reason !== 'string' && carriesContent(delta))
      this.#usageAfterFinish = false;
    if (delta) {
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === 'string' && reasoning.length > 0)
        this.builder.thinking('reasoning', reasoning);
      if (typeof delta.content === 'string') this.#content(delta.content);
      if (typeof delta.refusal === 'string' && delta.refusal.length > 0) {
        this.#refused = true;
        this.builder.text('text', delta.refusal);
      }
      const calls = delta.tool_calls as Json[] | undefined;
      if (Array.isArray(calls)) {
        for (let i = 0; i < calls.length; i++) {
          const call = asObject(calls[i]);
          if (call) this.#toolCall(call, i);
        }
      }
    }
    const reason = choice.finish_reason;
    if (typeof reason === 'string') {
      this.builder.closeAll();
      this.#finished = true;
      this.#stopReason = mapOpenAIChatFinishReason(reason);
    }
  }

  #content(text: string): void {
    if (text.length === 0) return;
    this.builder.close('reasoning');
    this.builder.text('text', text);
  }

  #toolCall(call: Json, position: number): void {
    const fn = (call.function ?? {}) as Json;
    const id = typeof call.id === 'string' && call.id !== '' ? call.id : undefined;
    // Fragments are keyed by `index`. Servers that omit it (older Ollama) send each call whole, with its own id:
    // key those by id, and an id-less fragment continues the call opened last.
    let key: string;
    if (typeof call.index === 'number') key = `tool:${call.index}`;
    else if (id !== undefined) key = `tool:id:${id}`;
    else key = this.#lastToolKey ?? `tool:${position}`;
    this.#lastToolKey = key;
    const name = typeof fn.name === 'string' && fn.name !== '' ? fn.name : undefined;
    const given = this.#givenIds.get(key);
    // A fragment with another id and a name at an open index is a new call (servers that put every call at index
    // 0), not more of the open one: merging would glue two argument objects into one invalid call. Another id
    // without a name only renames the open call (what the fragment of a new call always carries is its name).
    const anotherCall = id !== undefined && given !== undefined && id !== given && name !== undefined;
    if (id !== undefined) this.#givenIds.set(key, id);
    if (!this.builder.hasTool(key) || anotherCall) {
      this.builder.close('text');
      this.builder.close('reasoning');
      // Some servers omit ids; synthesise one so the result can be matched to its call.
      this.builder.toolStart(key, id ?? `call_${++this.#callSeq}`, name ?? '');
    } else if (id !== undefined || name !== undefined) {
      this.builder.toolIdentity(key, id, name);
    }
    if (typeof fn.arguments === 'string') this.builder.toolArgs(key, fn.arguments);
    else if (fn.arguments !== null && typeof fn.arguments === 'object') {
      // Ollama sends arguments as an object, whole.
      this.builder.toolArgs(key, argumentsJson(API, fn.arguments));
    }
  }
}

/**
 * True for a chunk that only carries text: one choice whose delta has string `content` and no reasoning, refusal or
 * tool calls, no finish reason, no usage, no error. A chunk that differs from it only in that text has the same effect
 * apart from the text, which is what lets `DeltaTemplate` skip parsing the rest.
 */
function isPlainText(chunk: Json, choice: Json): boolean {
  if (!Array.isArray(chunk.choices) || chunk.choices.length !== 1) return false;
  if (typeof choice.finish_reason === 'string') return false;
  const delta = asObject(choice.delta);
  if (delta === undefined || typeof delta.content !== 'string') return false;
  return (
    typeof (delta.reasoning_content ?? delta.reasoning) !== 'string' &&
    typeof delta.refusal !== 'string' &&
    !Array.isArray(delta.tool_calls)
  );
}

/** True when a delta carries any of the response: text, reasoning, a refusal or tool calls (not an empty `{}`). */
function carriesContent(delta: Json): boolean {
  const nonEmpty = (v: unknown) => typeof v === 'string' && v.length > 0;
  return (
    nonEmpty(delta.content) ||
    nonEmpty(delta.reasoning_content ?? delta.reasoning) ||
    nonEmpty(delta.refusal) ||
    (Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0)
  );
}

/** The text of a plain-text chunk (see `isPlainText`), else `undefined`. */
function plainTextOf(chunk: Json): unknown {
  const choice = Array.isArray(chunk.choices) ? asObject(chunk.choices[0]) : undefined;
  if (choice === undefined || !isPlainText(chunk, choice)) return undefined;
  return asObject(choice.delta)?.content;
}

function chatStreamError(error: unknown): ProviderError {
  const e = (typeof error === 'object' && error !== null ? error : { message: safeString(error) }) as Json;
  const type = typeof e.type === 'string' ? e.type : typeof e.code === 'string' ? e.code : undefined;
  const status = typeof e.code === 'number' ? e.code : undefined;
  return new ProviderError({
    api: API,
    providerMessage: typeof e.message === 'string' ? e.message : safeJson(e),
    ...(type === undefined ? {} : { providerType: type }),
    ...(status === undefined ? {} : { status }),
    retryable:
      type === 'server_error' || type === 'rate_limit_exceeded' || (status !== undefined && status >= 500),
  });
}
