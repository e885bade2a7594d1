/**
 * OpenAI Responses streaming parser (https://platform.openai.com/docs/api-reference/responses-streaming; event union
 * `ResponseStreamEvent` in openai `resources/responses/responses.d.ts`).
 *
 * Read: `response.created`, `response.output_item.added/done` (message, function_call, reasoning items),
 * `response.output_text.delta`, `response.refusal.delta`, `response.reasoning_summary_text.delta`,
 * `response.reasoning_text.delta`, `response.function_call_arguments.delta/done`, and the terminal
 * `response.completed` / `response.incomplete` (usage, incomplete reason) / `response.failed` and `error` (thrown as
 * `ProviderError`). Blocks are keyed by item id.
 *
 * Echo data: a reasoning item is kept as a thinking block whose `signature` is `reasoningSignature(id,
 * encrypted_content)` — the same shape `parseOpenAIResponsesResponse` gives and `toOpenAIResponses` echoes back.
 */

import type { AssistantMessage, StopReason } from '../../conversation.js';
import { DeltaTemplateSet } from '../common/delta-template.js';
import { MessageBuilder } from '../common/message-builder.js';
import { asObject, idOf } from '../common/response-common.js';
import { safeString } from '../common/safe-string.js';
import type { StreamEvent } from '../common/stream-event.js';
import {
  isDoneSentinel,
  parseJsonData,
  type StreamParserOptions,
  type SurfaceStreamParser,
} from '../common/surface-parser.js';
import { ProviderError } from '../transport/provider-error.js';
import type { SseEvent } from '../transport/sse-parser.js';
import {
  mapResponsesIncompleteReason,
  openAIResponsesUsage,
  reasoningSignature,
} from './openai-responses-response.js';

const API = 'openai-responses';

type Json = Record<string, unknown>;

/** A learned delta shape: which builder call applies it, under which key. */
interface DeltaTag {
  kind: 'text' | 'thinking' | 'args';
  key: string;
}

export class OpenAIResponsesStreamParser implements SurfaceStreamParser {
  readonly builder: MessageBuilder;
  #complete = false;
  #stopReason: StopReason = 'end';
  #refused = false;
  /** Function-call items already closed by `function_call_arguments.done`. */
  readonly #endedCalls = new Set<string>();
  /** Learned shapes of text/reasoning/argument delta events, applied without a full parse. */
  readonly #templates = new DeltaTemplateSet<DeltaTag>();

  constructor(emit: (event: StreamEvent) => void, options: StreamParserOptions = {}) {
    this.builder = new MessageBuilder(emit, { api: API });
    if (options.deltaTemplates === false) this.#templates.disable();
  }

  get complete(): boolean {
    return this.#complete;
  }

  /** The end marker is the last event: nothing follows it. */
  get ended(): boolean {
    return this.#complete;
  }

  accept(event: SseEvent): void {
    if (isDoneSentinel(event.data)) return;
    const templates = this.#templates;
    if (templates.match(event.data)) {
      const tag = templates.tag as DeltaTag;
      if (tag.kind === 'text') this.builder.text(tag.key, templates.value);
      else if (tag.kind === 'thinking') this.builder.thinking(tag.key, templates.value);
      else this.builder.toolArgs(tag.key, templates.value);
      return;
    }
    const data = parseJsonData(API, event.data);
    const type = typeof data.type === 'string' ? data.type : event.event;
    this.#learn(event.data, data, type);
    switch (type) {
      case 'response.created':
      case 'response.in_progress': {
        const model = (data.response as Json | undefined)?.model;
        if (typeof model === 'string' && model !== '') this.builder.model = model;
        break;
      }
      case 'response.output_item.added':
        this.#itemAdded(asObject(data.item), data.output_index);
        break;
      case 'response.output_text.delta':
        this.builder.text(`msg:${itemKey(data)}`, stringOr(data.delta));
        break;
      case 'response.refusal.delta':
        this.#refused = true;
        this.builder.text(`msg:${itemKey(data)}`, stringOr(data.delta));
        break;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        this.builder.thinking(`rs:${itemKey(data)}`, stringOr(data.delta));
        break;
      case 'response.reasoning_summary_part.added':
        // Summary parts are separate paragraphs.
        if (typeof data.summary_index === 'number' && data.summary_index > 0) {
          this.builder.thinking(`rs:${itemKey(data)}`, '\n\n');
        }
        break;
      case 'response.function_call_arguments.delta':
        this.builder.toolArgs(`fc:${itemKey(data)}`, stringOr(data.delta));
        break;
      case 'response.function_call_arguments.done':
        if (typeof data.arguments === 'string') {
          this.builder.toolEnd(`fc:${itemKey(data)}`, data.arguments);
          this.#endedCalls.add(itemKey(data));
        }
        break;
      case 'response.output_item.done':
        this.#itemDone(asObject(data.item), data.output_index);
        break;
      case 'response.completed':
      case 'response.incomplete':
        this.#finish(data.response as Json | undefined);
        break;
      case 'response.failed': {
        const response = (data.response ?? {}) as Json;
        const err = (response.error ?? {}) as Json;
        throw responsesError(err.message, err.code);
      }
      case 'error': {
        // The API nests the details (`{type:'error', error:{type, code, message}}`); the SDK type has them flat.
        const err = asObject(data.error);
        throw responsesError(err?.message ?? data.message, err?.code ?? err?.type ?? data.code);
      }
      default:
        break;
    }
  }

  /** Learn the shape of a delta event (see delta-template.ts) so the next ones of its item skip the full parse. */
  #learn(raw: string, data: Json, type: string): void {
    if (typeof data.delta !== 'string' || data.type !== type) return;
    let tag: DeltaTag;
    if (type === 'response.output_text.delta') tag = { kind: 'text', key: `msg:${itemKey(data)}` };
    else if (type === 'response.reasoning_summary_text.delta' || type === 'response.reasoning_text.delta')
      tag = { kind: 'thinking', key: `rs:${itemKey(data)}` };
    else if (type === 'response.function_call_arguments.delta')
      tag = { kind: 'args', key: `fc:${itemKey(data)}` };
    else return;
    const itemId = data.item_id;
    this.#templates.learn(
      raw,
      'delta',
      (p) => (p.type === type && p.item_id === itemId ? p.delta : undefined),
      tag,
    );
  }

  result(): AssistantMessage {
    let stop = this.#stopReason;
    if (stop === 'end' && this.#refused) stop = 'refusal';
    if (stop === 'end' && this.builder.toolCallCount > 0) stop = 'tool_use';
    return this.builder.build(stop);
  }

  partial(stopReason: 'error' | 'aborted', errorMessage?: string): AssistantMessage {
    return this.builder.build(stopReason, errorMessage);
  }

  /** A call's id: its `call_id`, else its item id, else (missing or not a string) a synthesised `call_<n>`. */
  #callId(item: Json): string {
    return idOf(item.call_id) ?? idOf(item.id) ?? `call_${this.builder.toolCallCount + 1}`;
  }

  #itemAdded(item: Json | undefined, outputIndex: unknown): void {
    if (item?.type === 'function_call') {
      const id =
        item.id === undefined && typeof item.call_id === 'string'
          ? item.call_id
          : idKey(item.id, outputIndex);
      this.builder.toolStart(`fc:${id}`, this.#callId(item), safeString(item.name ?? ''));
      if (typeof item.arguments === 'string' && item.arguments !== '')
        this.builder.toolArgs(`fc:${id}`, item.arguments);
    }
  }

  #itemDone(item: Json | undefined, outputIndex: unknown): void {
    if (item === undefined) return;
    const id = item.id === undefined ? '' : idKey(item.id, outputIndex);
    switch (item.type) {
      case 'function_call': {
        const key = `fc:${id}`;
        if (this.#endedCalls.has(id)) break;
        if (!this.builder.hasTool(key)) {
          // A server that sends only the finished item.
          this.builder.toolStart(key, this.#callId(item), safeString(item.name ?? ''));
        }
        this.builder.toolEnd(key, typeof item.arguments === 'string' ? item.arguments : undefined);
        break;
      }
      case 'reasoning': {
        const key = `rs:${id}`;
        const summary = item.summary as Json[] | undefined;
        const encrypted = typeof item.encrypted_content === 'string' ? item.encrypted_content : null;
        // A server that streams no summary deltas still gives the summary in the finished item.
        if (!this.builder.hasThinking(key) && Array.isArray(summary) && summary.length > 0) {
          this.builder.thinking(key, summary.map((s) => safeString(asObject(s)?.text ?? '')).join('\n\n'));
        }
        this.builder.thinkingSignature(key, reasoningSignature(id, encrypted));
        this.builder.close(key);
        break;
      }
      case 'message': {
        const key = `msg:${id}`;
        if (!this.builder.hasText(key)) {
          for (const raw of Array.isArray(item.content) ? item.content : []) {
            const c = asObject(raw);
            if (c?.type === 'output_text' && typeof c.text === 'string') this.builder.text(key, c.text);
            else if (c?.type === 'refusal' && typeof c.refusal === 'string') {
              this.#refused = true;
              this.builder.text(key, c.refusal);
            }
          }
        }
        this.builder.close(key);
        break;
      }
      default:
        break;
    }
  }

  #finish(response: Json | undefined): void {
    this.#complete = true;
    if (typeof response?.model === 'string' && response.model !== '') this.builder.model = response.model;
    const reason = (response?.incomplete_details as Json | null | undefined)?.reason;
    if (response?.status === 'incomplete' || reason !== undefined) {
      this.#stopReason = mapResponsesIncompleteReason(reason);
    }
    const usage = response?.usage as Json | null | undefined;
    if (usage && typeof usage === 'object') this.builder.setUsage(openAIResponsesUsage(usage));
  }
}

/** `value` when it is a string, else `''` (a delta that is not a string carries nothing, not `[object Object]`). */
function stringOr(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function responsesError(message: unknown, code: unknown): ProviderError {
  const type = typeof code === 'string' ? code : undefined;
  return new ProviderError({
    api: API,
    providerMessage: typeof message === 'string' ? message : 'response failed',
    ...(type === undefined ? {} : { providerType: type }),
    retryable: type === 'server_error' || type === 'rate_limit_exceeded',
  });
}

/**
 * The key of an output item's blocks, from its id: a string as it is; an object or array id (which would stringify to
 * one shared `[object Object]`, merging two items) by the event's `output_index`; any other value as `safeString`.
 */
function idKey(id: unknown, outputIndex: unknown): string {
  if (typeof id !== 'object' || id === null) return safeString(id);
  return `@${typeof outputIndex === 'number' ? outputIndex : safeString(outputIndex)}`;
}

/** The key of the item a delta event names by `item_id` (see `idKey`). */
function itemKey(data: Json): string {
  return idKey(data.item_id, data.output_index);
}
