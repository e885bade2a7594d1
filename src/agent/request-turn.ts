/**
 * One model request of a turn and its retries, as functions over the agent's state (`TurnContext`): serialize the
 * conversation, stream the answer (reporting its events), and try again under three policies —
 * - a rejected image/PDF (`media-rejection.ts`): once, with that part left out of this and every later request;
 * - a context overflow (`context-overflow.ts`): once, after the agent compacted (`recoverFromOverflow`);
 * - a stream cut after part of the answer: up to `maxStreamRetries` times, when no tool call of it was complete
 *   (a `message_reset` event first); otherwise a `stream-interrupted` warning says why not.
 * Anything else ends the turn with the provider's error. Never throws for a provider failure: the outcome carries it.
 */

import type { AssistantMessage, Message } from '../conversation.js';
import { isPantoError, PantoError } from '../errors.js';
import type { MediaRef, PartFilter } from '../providers/common/serialize-options.js';
import type { Provider } from '../providers/http-provider.js';
import type { ModelInfo } from '../providers/model/model-info.js';
import { type RequestOptions, serializeRequest } from '../providers/serialize-request.js';
import { ProviderError } from '../providers/transport/provider-error.js';
import { sleep } from '../providers/transport/retry-policy.js';
import type { AgentEvent, AgentWarning } from './agent-events.js';
import { isContextOverflow } from './context-overflow.js';
import { findRejectedMedia, mediaDataAt } from './media-rejection.js';

/** What a turn reads from the agent and tells it. */
export interface TurnContext {
  readonly provider: Provider;
  readonly model: ModelInfo;
  /** The conversation as it stands (a compaction during the turn replaces it). */
  messages(): readonly Message[];
  /** The request options of this model, with tools and system prompt; the omissions are added here. */
  requestOptions(): RequestOptions;
  /** Base64 of the parts a provider rejected: left out of every later request. */
  readonly rejected: Set<string>;
  readonly maxStreamRetries: number;
  readonly streamRetryDelayMs: number;
  emit(event: AgentEvent): void;
  /** Report a warning once per agent. */
  warn(warning: AgentWarning): void;
  /** After a context-overflow refusal: compact. Resolves to true when a retry may help. */
  recoverFromOverflow(error: ProviderError, signal: AbortSignal): Promise<boolean>;
}

/** The answer of a turn (possibly failed or aborted) and the error that ended it, if any. */
export interface TurnOutcome {
  message: AssistantMessage;
  error?: PantoError;
}

const REJECTED_REASON = 'the provider rejected this attachment';

/** One model request, plus the retries of the module contract. */
export async function requestTurn(ctx: TurnContext, signal: AbortSignal): Promise<TurnOutcome> {
  let mediaRetried = false;
  let overflowRetried = false;
  let streamRetries = 0;
  for (;;) {
    const omit: PartFilter = (_ref, part) => ctx.rejected.has(part.data);
    const serialized = serializeRequest(ctx.messages(), ctx.model, {
      ...ctx.requestOptions(),
      omitParts: omit,
      omitReason: REJECTED_REASON,
    });
    for (const w of serialized.warnings) {
      ctx.warn(
        w.parts === undefined
          ? { code: w.code, message: w.message }
          : { code: w.code, message: w.message, parts: w.parts },
      );
    }
    const attempt = await streamAnswer(ctx, serialized.body, signal);
    const { terminal } = attempt;
    const { error } = terminal;
    if (!(error instanceof ProviderError) || signal.aborted) return terminal;
    if (!mediaRetried && leaveOutRejectedMedia(ctx, error, serialized.media)) {
      mediaRetried = true;
      continue;
    }
    if (isContextOverflow(error)) {
      if (overflowRetried || !(await ctx.recoverFromOverflow(error, signal))) return terminal;
      overflowRetried = true;
      continue;
    }
    if (attempt.sawContent && error.retryable) {
      if (!mayRequestAgain(ctx, error, attempt.completeCall, streamRetries)) return terminal;
      streamRetries++;
      const delayMs = error.retryAfterMs ?? ctx.streamRetryDelayMs * streamRetries;
      ctx.emit({ type: 'message_reset', attempt: streamRetries, delayMs, error });
      try {
        await sleep(delayMs, signal);
      } catch {
        return { message: { ...terminal.message, stopReason: 'aborted' }, error: abortError(signal) };
      }
      continue;
    }
    return terminal;
  }
}

/** Stream one request, reporting its events; what it ended with and whether content (or a whole call) came first. */
async function streamAnswer(
  ctx: TurnContext,
  body: Record<string, unknown>,
  signal: AbortSignal,
): Promise<{ terminal: TurnOutcome; sawContent: boolean; completeCall: boolean }> {
  let terminal: TurnOutcome | undefined;
  let sawContent = false;
  let completeCall = false;
  for await (const event of ctx.provider.stream({ model: ctx.model.id, body }, { signal })) {
    switch (event.type) {
      case 'start':
        ctx.emit({ type: 'message_start', role: 'assistant' });
        break;
      case 'text_delta':
      case 'thinking_delta':
      case 'toolcall_start':
      case 'toolcall_delta':
      case 'toolcall_end':
        sawContent = true;
        if (event.type === 'toolcall_end') completeCall = true;
        ctx.emit({ type: 'message_delta', delta: event });
        break;
      case 'retry':
        ctx.emit({ type: 'retry', attempt: event.attempt, delayMs: event.delayMs, error: event.error });
        break;
      case 'done':
        terminal = { message: event.message };
        break;
      case 'error':
        terminal = { message: event.message, error: event.error };
        break;
      default:
        break;
    }
  }
  if (terminal === undefined) {
    const error = new PantoError(
      'ERR_PROVIDER',
      `${ctx.provider.name}: the stream ended without a final message`,
    );
    terminal = { message: failedMessage(error), error };
  }
  return { terminal, sawContent, completeCall };
}

/**
 * Policy 1: when the error blames one image/PDF of the request, leave it out of this and every later request (history
 * unchanged) and say so. True when the request should be made again.
 */
function leaveOutRejectedMedia(ctx: TurnContext, error: ProviderError, media: readonly MediaRef[]): boolean {
  const ref = findRejectedMedia(error, media);
  const data = ref === undefined ? undefined : mediaDataAt(ctx.messages(), ref);
  if (ref === undefined || data === undefined) return false;
  ctx.rejected.add(data);
  ctx.warn({
    code: 'media-rejected',
    message: `the provider rejected the request because of the ${ref.type} at ${ref.path} (${error.providerMessage}); it was replaced by a placeholder in the request (history unchanged) and the request retried`,
    parts: [ref.key],
  });
  return true;
}

/**
 * Policy 3: a stream cut after part of the answer may be requested again unless a tool call of it was complete or
 * it was cut `maxStreamRetries` times already; when not, a `stream-interrupted` warning says why.
 */
function mayRequestAgain(
  ctx: TurnContext,
  error: ProviderError,
  completeCall: boolean,
  retries: number,
): boolean {
  if (!completeCall && retries < ctx.maxStreamRetries) return true;
  const why = completeCall
    ? 'a tool call of it was already complete'
    : `it was cut ${retries} time${retries === 1 ? '' : 's'} already (maxStreamRetries ${ctx.maxStreamRetries})`;
  ctx.emit({
    type: 'warning',
    warning: {
      code: 'stream-interrupted',
      message: `the answer stream broke off after part of the answer (${error.message}); not requested again because ${why}. The partial answer is kept, marked as failed`,
    },
  });
  return false;
}

/** The error a run aborted through `signal` ends with. */
export function abortError(signal: AbortSignal): PantoError {
  const reason: unknown = signal.reason;
  if (isPantoError(reason, 'ERR_ABORTED')) return reason;
  return new PantoError(
    'ERR_ABORTED',
    'the run was aborted',
    reason === undefined ? undefined : { cause: reason },
  );
}

function failedMessage(error: PantoError): AssistantMessage {
  return { role: 'assistant', content: [], stopReason: 'error', errorMessage: error.message };
}
