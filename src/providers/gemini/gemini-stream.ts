/**
 * Gemini streaming parser for `models/{model}:streamGenerateContent?alt=sse`
 * (https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent; chunk type
 * `GenerateContentResponse` in @google/genai `dist/genai.d.ts`).
 *
 * Each `data:` is a whole `GenerateContentResponse`; only candidate 0 is read. Text parts stream as fragments
 * (`thought: true` marks reasoning); a `functionCall` part arrives whole (`{id?, name, args}`) — a call without an id
 * gets `gemini_<responseId>_<n>` and `providerData.syntheticId: true`, as `parseGeminiResponse` does. A
 * `thoughtSignature` on a function-call part is kept in `providerData.thoughtSignature` (Gemini 3 rejects a
 * follow-up without it); on a thought part it becomes the thinking block's signature. `usageMetadata` is cumulative
 * (last wins). A call whose arguments stream as `partialArgs` (Vertex `streamFunctionCallArguments`) is assembled
 * by `PartialArgsAccumulator` and closed by the part without `willContinue` (or by the finish reason). There is no
 * end-of-stream marker: a `finishReason` marks completion. A prompt blocked by
 * `promptFeedback.blockReason` ends as a refusal; an `{error}` chunk is thrown.
 */

import type { AssistantMessage, StopReason } from '../../conversation.js';
import { argumentsJson } from '../common/argument-depth.js';
import { DeltaTemplateSet } from '../common/delta-template.js';
import { MessageBuilder } from '../common/message-builder.js';
import { asObject } from '../common/response-common.js';
import { safeJson } from '../common/safe-string.js';
import type { StreamEvent } from '../common/stream-event.js';
import {
  isDoneSentinel,
  parseJsonData,
  type StreamParserOptions,
  type SurfaceStreamParser,
} from '../common/surface-parser.js';
import { ProviderError } from '../transport/provider-error.js';
import type { SseEvent } from '../transport/sse-parser.js';
import { PartialArgsAccumulator } from './gemini-partial-args.js';
import { geminiUsage, mapGeminiFinishReason } from './gemini-response.js';

const API = 'gemini';

type Json = Record<string, unknown>;

export class GeminiStreamParser implements SurfaceStreamParser {
  readonly builder: MessageBuilder;
  #complete = false;
  #stopReason: StopReason = 'end';
  #callSeq = 0;
  #blockSeq = 0;
  #idBase = 'gemini_call';
  /** The `responseId` `#idBase` was made from (chunks repeat it). */
  #responseId: string | undefined;
  #textKey = 'text:0';
  #thoughtKey = 'thought:0';
  #finishMessage: string | undefined;
  #blocked: string | undefined;
  /** The call whose arguments arrive as `partialArgs` pieces, while it is open. */
  #streamedCall: { key: string; args: PartialArgsAccumulator } | undefined;

  /**
   * Learned shapes of text chunks (every chunk of a long answer), applied without a full parse. Each chunk repeats a
   * cumulative `usageMetadata`, so these are object templates (see delta-template.ts): the numbers are holes, and a
   * matching chunk is handled as the parsed chunk the template rebuilds.
   */
  readonly #templates: DeltaTemplateSet<undefined> | undefined;

  constructor(emit: (event: StreamEvent) => void, options: StreamParserOptions = {}) {
    this.builder = new MessageBuilder(emit, { api: API });
    this.#templates = options.deltaTemplates === false ? undefined : new DeltaTemplateSet<undefined>();
  }

  get complete(): boolean {
    return this.#complete;
  }

  /** The end marker is the last event: nothing follows it. */
  get ended(): boolean {
    return this.#complete;
  }

  accept(event: SseEvent): void {
    const data = event.data;
    const templates = this.#templates;
    if (templates?.match(data)) {
      this.#chunk(templates.object() as Json);
      return;
    }
    if (isDoneSentinel(data)) return;
    const chunk = parseJsonData(API, data);
    this.#chunk(chunk);
    // Learn this shape so the next text chunks skip the full parse.
    if (templates !== undefined && isPlainTextChunk(chunk))
      templates.learn(data, 'text', lastTextOf, undefined, { numbers: true });
  }

  /** Apply one parsed chunk. Keeps no reference into `chunk` for a chunk without function calls (object templates). */
  #chunk(chunk: Json): void {
    if (chunk.error !== undefined && chunk.error !== null) throw geminiStreamError(chunk.error as Json);
    if (typeof chunk.modelVersion === 'string' && chunk.modelVersion !== '')
      this.builder.model = chunk.modelVersion;
    const responseId = chunk.responseId;
    if (typeof responseId === 'string' && responseId !== this.#responseId) {
      this.#responseId = responseId;
      this.#idBase = `gemini_${responseId.replace(/[^a-zA-Z0-9_-]/g, '')}`;
    }
    const candidate = (chunk.candidates as Json[] | undefined)?.[0];
    const parts = (candidate?.content as Json | undefined)?.parts as Json[] | undefined;
    for (const raw of Array.isArray(parts) ? parts : []) {
      const part = asObject(raw);
      if (part) this.#part(part);
    }
    const usage = chunk.usageMetadata as Json | undefined;
    if (usage && typeof usage === 'object') this.builder.setUsage(geminiUsage(usage));
    const feedback = chunk.promptFeedback as Json | undefined;
    if (typeof feedback?.blockReason === 'string') {
      this.#complete = true;
      this.#stopReason = 'refusal';
      this.#blocked = feedback.blockReason;
    }
    if (typeof candidate?.finishMessage === 'string') this.#finishMessage = candidate.finishMessage;
    const reason = candidate?.finishReason;
    if (typeof reason === 'string' && reason !== 'FINISH_REASON_UNSPECIFIED') {
      this.#endStreamedCall();
      this.#complete = true;
      this.#stopReason = mapGeminiFinishReason(reason);
    }
  }

  result(): AssistantMessage {
    const stop = this.#stopReason === 'end' && this.builder.toolCallCount > 0 ? 'tool_use' : this.#stopReason;
    if (this.#blocked !== undefined) return this.builder.build(stop, `prompt blocked: ${this.#blocked}`);
    if (stop === 'error' && this.#finishMessage !== undefined)
      return this.builder.build(stop, this.#finishMessage);
    return this.builder.build(stop);
  }

  partial(stopReason: 'error' | 'aborted', errorMessage?: string): AssistantMessage {
    return this.builder.build(stopReason, errorMessage);
  }

  #part(part: Json): void {
    const signature = typeof part.thoughtSignature === 'string' ? part.thoughtSignature : undefined;
    const call = asObject(part.functionCall);
    if (call) {
      this.#functionCall(call, signature);
      return;
    }
    this.#endStreamedCall();
    if (typeof part.text !== 'string') return;
    if (part.thought === true) {
      this.builder.close(this.#textKey);
      this.builder.thinking(this.#thoughtKey, part.text);
      if (signature !== undefined) this.builder.thinkingSignature(this.#thoughtKey, signature);
      return;
    }
    this.builder.close(this.#thoughtKey);
    this.builder.text(this.#textKey, part.text);
  }

  /**
   * A `functionCall` part: a whole call, or one step of a call whose arguments stream as `partialArgs` (the first part
   * names it with `willContinue: true`, later parts without a name add pieces, the part without `willContinue` ends it).
   */
  #functionCall(call: Json, signature: string | undefined): void {
    const name = typeof call.name === 'string' && call.name !== '' ? call.name : undefined;
    const pieces = Array.isArray(call.partialArgs) ? (call.partialArgs as unknown[]) : undefined;
    const continues = call.willContinue === true;
    const streamed = this.#streamedCall;
    if (streamed !== undefined && name === undefined) {
      if (pieces) streamed.args.apply(pieces);
      if (signature !== undefined) this.builder.toolData(streamed.key, { thoughtSignature: signature });
      if (!continues) this.#endStreamedCall();
      return;
    }
    this.#endStreamedCall();
    // An empty end marker with no call open carries nothing.
    if (name === undefined && pieces === undefined && asObject(call.args) === undefined) return;
    this.builder.close(this.#textKey);
    this.builder.close(this.#thoughtKey);
    this.#blockSeq++;
    this.#textKey = `text:${this.#blockSeq}`;
    this.#thoughtKey = `thought:${this.#blockSeq}`;
    const key = `fc:${++this.#callSeq}`;
    const hasId = typeof call.id === 'string' && call.id !== '';
    // Same synthetic ids as parseGeminiResponse: `gemini_<responseId>_<n>`, flagged so they are not echoed.
    const id = hasId ? (call.id as string) : `${this.#idBase}_${this.builder.blockCount}`;
    const data: Record<string, unknown> = {};
    if (signature !== undefined) data.thoughtSignature = signature;
    if (!hasId) data.syntheticId = true;
    this.builder.toolStart(key, id, name ?? '', Object.keys(data).length > 0 ? data : undefined);
    const args = asObject(call.args);
    if (continues || pieces !== undefined) {
      this.#streamedCall = { key, args: new PartialArgsAccumulator(args) };
      if (pieces) this.#streamedCall.args.apply(pieces);
      if (!continues) this.#endStreamedCall();
      return;
    }
    this.builder.toolArgs(key, args ? argumentsJson(API, args) : '{}');
    this.builder.toolEnd(key);
  }

  /** Finish the call whose arguments were streaming, if one is open. */
  #endStreamedCall(): void {
    const streamed = this.#streamedCall;
    if (streamed === undefined) return;
    this.#streamedCall = undefined;
    this.builder.toolArgs(streamed.key, streamed.args.argumentsText());
    this.builder.toolEnd(streamed.key);
  }
}

/**
 * True for a chunk a template may stand for: no error, and candidate 0 holds text parts and no function call (the
 * handler keeps no reference into such a chunk, so the template's rebuilt object can be reused).
 */
function isPlainTextChunk(chunk: Json): boolean {
  if (chunk.error !== undefined) return false;
  const candidates = chunk.candidates;
  const candidate = Array.isArray(candidates) ? asObject(candidates[0]) : undefined;
  const parts = asObject(candidate?.content)?.parts;
  if (!Array.isArray(parts) || parts.length === 0) return false;
  for (const part of parts) {
    const p = asObject(part);
    if (p === undefined || p.functionCall !== undefined || typeof p.text !== 'string') return false;
  }
  return true;
}

/** The text of the last part of candidate 0 (what the template's value hole must be). */
function lastTextOf(chunk: Json): unknown {
  const candidates = chunk.candidates;
  const candidate = Array.isArray(candidates) ? asObject(candidates[0]) : undefined;
  const parts = asObject(candidate?.content)?.parts;
  return Array.isArray(parts) ? asObject(parts[parts.length - 1])?.text : undefined;
}

function geminiStreamError(error: Json): ProviderError {
  const status = typeof error.code === 'number' ? error.code : undefined;
  const type = typeof error.status === 'string' ? error.status : undefined;
  return new ProviderError({
    api: API,
    providerMessage: typeof error.message === 'string' ? error.message : safeJson(error),
    ...(status === undefined ? {} : { status }),
    ...(type === undefined ? {} : { providerType: type }),
    retryable: status === 429 || (status !== undefined && status >= 500) || type === 'UNAVAILABLE',
  });
}
