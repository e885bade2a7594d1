/**
 * Anthropic Messages streaming parser (https://docs.anthropic.com/en/api/messages-streaming; event types
 * `RawMessageStreamEvent` in @anthropic-ai/sdk `resources/messages/messages.d.ts`).
 *
 * Events: `message_start` → (`content_block_start` → `content_block_delta`* → `content_block_stop`)* →
 * `message_delta` (stop_reason, cumulative usage) → `message_stop`; `ping` anywhere; `error` (e.g.
 * `overloaded_error`) anywhere — thrown as a `ProviderError`, retryable for overloaded/api/rate-limit errors.
 * Server-tool blocks (web search and the like) are skipped: the agent only runs client tools.
 *
 * Hostile input: a `content_block_*` event whose `index` is not a finite number is a non-retryable `ProviderError`
 * (any number is only a label: 1e9 or -1 allocate nothing); a delta whose value is not a string, or for a block never
 * started, is ignored (as the official SDK's accumulator does); a second start at an open index closes the first block.
 */

import type { AssistantMessage, StopReason, Usage } from '../../conversation.js';
import { argumentsJson } from '../common/argument-depth.js';
import { DeltaTemplateSet } from '../common/delta-template.js';
import { MessageBuilder } from '../common/message-builder.js';
import { asObject, idOf, tokenCount } from '../common/response-common.js';
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
import { mapAnthropicStopReason } from './anthropic-response.js';

const API = 'anthropic-messages';

type Json = Record<string, unknown>;

/** The string member each delta type carries, or `undefined` for a delta type we do not read. */
function deltaField(type: unknown): string | undefined {
  switch (type) {
    case 'text_delta':
      return 'text';
    case 'thinking_delta':
      return 'thinking';
    case 'signature_delta':
      return 'signature';
    case 'input_json_delta':
      return 'partial_json';
    default:
      return undefined;
  }
}

interface DeltaTag {
  index: number;
  type: string;
}

export class AnthropicStreamParser implements SurfaceStreamParser {
  readonly builder: MessageBuilder;
  #complete = false;
  #ended = false;
  #stopReason: StopReason = 'end';
  #usage: Usage = { inputTokens: 0, outputTokens: 0 };
  /** Block index → key kind, for blocks we track. */
  readonly #kinds = new Map<number, 'text' | 'thinking' | 'tool'>();
  /** Block index → key string, so a delta does not build a string (a Map: an index is any number the server sent). */
  readonly #keys = new Map<number, string>();
  /** Learned shapes of `content_block_delta` events (most events of a stream), applied without a full parse. */
  readonly #templates = new DeltaTemplateSet<DeltaTag>();

  constructor(emit: (event: StreamEvent) => void, options: StreamParserOptions = {}) {
    this.builder = new MessageBuilder(emit, { api: API });
    if (options.deltaTemplates === false) this.#templates.disable();
  }

  /**
   * A `message_delta` with a `stop_reason` was seen (the response has its end), or `message_stop`. A server that sends
   * the stop reason and then holds the connection without `message_stop` is ended by the transport `finishGraceMs`
   * after it, as an OpenAI Chat finish reason without `[DONE]` is.
   */
  get complete(): boolean {
    return this.#complete;
  }

  /** `message_stop`, the last event: nothing follows it. */
  get ended(): boolean {
    return this.#ended;
  }

  accept(event: SseEvent): void {
    if (event.event === 'ping') return;
    const templates = this.#templates;
    if (templates.match(event.data)) {
      const tag = templates.tag as DeltaTag;
      this.#delta(tag.index, tag.type, templates.value);
      return;
    }
    if (isDoneSentinel(event.data)) return;
    const data = parseJsonData(API, event.data);
    const type = typeof data.type === 'string' ? data.type : event.event;
    switch (type) {
      case 'message_start':
        this.#messageStart(data.message as Json | undefined);
        break;
      case 'content_block_start': {
        const block = asObject(data.content_block);
        if (block) this.#blockStart(blockIndex(data), block);
        break;
      }
      case 'content_block_delta': {
        const delta = asObject(data.delta);
        if (delta) this.#blockDelta(blockIndex(data), delta, event.data);
        break;
      }
      case 'content_block_stop': {
        const index = blockIndex(data);
        if (this.#kinds.get(index) === 'tool') this.builder.toolEnd(String(index));
        else this.builder.close(String(index));
        this.#kinds.delete(index);
        break;
      }
      case 'message_delta':
        this.#messageDelta(data);
        break;
      case 'message_stop':
        this.#complete = true;
        this.#ended = true;
        break;
      case 'error':
        throw anthropicStreamError(data);
      default:
        break;
    }
  }

  result(): AssistantMessage {
    const stop = this.#stopReason === 'end' && this.builder.toolCallCount > 0 ? 'tool_use' : this.#stopReason;
    return this.builder.build(stop);
  }

  partial(stopReason: 'error' | 'aborted', errorMessage?: string): AssistantMessage {
    return this.builder.build(stopReason, errorMessage);
  }

  #messageStart(message: Json | undefined): void {
    if (typeof message?.model === 'string' && message.model !== '') this.builder.model = message.model;
    const usage = message?.usage as Json | undefined;
    if (usage) this.#mergeUsage(usage);
  }

  #key(index: number): string {
    let key = this.#keys.get(index);
    if (key === undefined) {
      key = String(index);
      this.#keys.set(index, key);
    }
    return key;
  }

  #blockStart(index: number, block: Json): void {
    const key = this.#key(index);
    switch (block.type) {
      case 'text':
        this.#kinds.set(index, 'text');
        if (typeof block.text === 'string') this.builder.text(key, block.text);
        break;
      case 'thinking':
        this.#kinds.set(index, 'thinking');
        this.builder.thinking(key, typeof block.thinking === 'string' ? block.thinking : '');
        if (typeof block.signature === 'string' && block.signature !== '') {
          this.builder.thinkingSignature(key, block.signature);
        }
        break;
      case 'redacted_thinking':
        this.#kinds.set(index, 'thinking');
        this.builder.redactedThinking(key, typeof block.data === 'string' ? block.data : '');
        break;
      case 'tool_use': {
        this.#kinds.set(index, 'tool');
        const id = idOf(block.id) ?? `call_${this.builder.toolCallCount + 1}`;
        this.builder.toolStart(key, id, safeString(block.name ?? ''));
        // The start event carries `input: {}`; a non-empty input (no deltas follow) is the whole argument object.
        const input = block.input;
        if (input !== null && typeof input === 'object' && Object.keys(input).length > 0) {
          this.builder.toolArgs(key, argumentsJson(API, input));
        }
        break;
      }
      default:
        break;
    }
  }

  #blockDelta(index: number, delta: Json, raw: string): void {
    const field = deltaField(delta.type);
    if (field === undefined) return;
    const type = delta.type as string;
    const value = delta[field];
    if (typeof value !== 'string') return;
    this.#delta(index, type, value);
    // Learn this shape so the next deltas of the block skip the full parse (see delta-template.ts).
    this.#templates.learn(
      raw,
      field,
      (p) => (p.type === 'content_block_delta' && p.index === index ? asObject(p.delta)?.[field] : undefined),
      { index, type },
    );
  }

  #delta(index: number, type: string, value: string): void {
    const key = this.#key(index);
    switch (type) {
      case 'text_delta':
        if (this.#kinds.get(index) === 'text') this.builder.text(key, value);
        break;
      case 'thinking_delta':
        this.builder.thinking(key, value);
        break;
      case 'signature_delta':
        this.builder.thinkingSignature(key, value, true);
        break;
      case 'input_json_delta':
        this.builder.toolArgs(key, value);
        break;
      default:
        break;
    }
  }

  #messageDelta(data: Json): void {
    const delta = data.delta as Json | undefined;
    const reason = delta?.stop_reason;
    if (typeof reason === 'string') {
      this.#stopReason = mapAnthropicStopReason(reason);
      this.#complete = true;
    }
    const usage = data.usage as Json | undefined;
    if (usage) this.#mergeUsage(usage);
  }

  #mergeUsage(u: Json): void {
    const next: Usage = { ...this.#usage };
    if (typeof u.input_tokens === 'number') next.inputTokens = tokenCount(u.input_tokens);
    if (typeof u.output_tokens === 'number') next.outputTokens = tokenCount(u.output_tokens);
    if (typeof u.cache_read_input_tokens === 'number')
      next.cacheReadTokens = tokenCount(u.cache_read_input_tokens);
    if (typeof u.cache_creation_input_tokens === 'number')
      next.cacheWriteTokens = tokenCount(u.cache_creation_input_tokens);
    this.#usage = next;
    this.builder.setUsage(next);
  }
}

/** The `index` of a `content_block_*` event; a non-retryable `ProviderError` when it is not a finite number. */
function blockIndex(data: Json): number {
  const index = data.index;
  if (typeof index === 'number' && Number.isFinite(index)) return index;
  throw new ProviderError({
    api: API,
    providerMessage: `malformed stream event: ${safeString(data.type)} has index ${safeJson(index)}, not a number`,
    retryable: false,
  });
}

/** An Anthropic `error` stream event (`{type:'error', error:{type, message}}`) as a `ProviderError`. */
export function anthropicStreamError(data: Json): ProviderError {
  const err = (data.error ?? {}) as Json;
  const type = typeof err.type === 'string' ? err.type : 'error';
  return new ProviderError({
    api: API,
    providerMessage: typeof err.message === 'string' ? err.message : safeJson(data),
    providerType: type,
    retryable: type === 'overloaded_error' || type === 'api_error' || type === 'rate_limit_error',
  });
}
