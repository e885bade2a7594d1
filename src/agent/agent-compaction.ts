/**
 * When the agent compacts, how (as functions over the agent's state, `CompactionContext`), and the default summarizer
 * (the agent's own provider and model).
 *
 * Trigger: the context size (`contextTokens`: the estimate — `estimateTokens` with the model's image rule, plus the
 * system prompt and tool declarations at ~4 characters per token — or, when larger, the usage the provider last
 * reported plus the estimate of what came after it) exceeds `contextWindow - reserveTokens`. `reserveTokens` is the
 * margin for the answer and for estimate error. After a context-overflow refusal the agent compacts whatever the
 * estimate (`recoverFromOverflow`), keeping at most a quarter of the window verbatim, and learns a smaller window the
 * provider states.
 */

import { type CompactionResult, compact, type Summarizer } from '../compaction/compact.js';
import { estimateTokens } from '../compaction/estimate-tokens.js';
import { assistantText, type Message, type Usage } from '../conversation.js';
import { PantoError } from '../errors.js';
import { collectStream } from '../providers/common/collect-stream.js';
import type { Provider } from '../providers/http-provider.js';
import type { ModelInfo } from '../providers/model/model-info.js';
import { serializeRequest } from '../providers/serialize-request.js';
import type { ProviderError } from '../providers/transport/provider-error.js';
import type { ToolDecl } from '../tool.js';
import { errorMessage } from '../tool-source.js';
import type { AgentEvent, AgentWarning } from './agent-events.js';
import { isContextOverflow, statedContextWindow } from './context-overflow.js';

export interface AgentCompactionOptions {
  /** Tokens kept free below the context window. Default: min(16,384, a quarter of the window). */
  reserveTokens?: number;
  /** Estimated tokens kept verbatim after a compaction. Default: min(20,000, a third of the window). */
  keepRecentTokens?: number;
  /** Writes the summary. Default: the agent's provider and model (`providerSummarizer`). */
  summarizer?: Summarizer;
  /**
   * Largest transcript one summarizer call gets, in estimated tokens (longer ones are summarized in rounds, see
   * `compact`). Default: three quarters of (the window − the summary's `max_tokens` − the summary prompt), so the
   * summary request fits the model that writes it.
   */
  maxSummaryInputTokens?: number;
}

export interface ResolvedCompaction {
  reserveTokens: number;
  keepRecentTokens: number;
  maxSummaryInputTokens: number;
  summarizer: Summarizer;
}

/** `max_tokens` of a summary request for a model with this window and output cap. */
export function summaryMaxTokens(window: number, maxOutputTokens: number): number {
  return Math.max(256, Math.min(maxOutputTokens, 4096, Math.floor(window / 8)));
}

/**
 * The settings for a context window of `window` tokens (the model's, or a smaller one the provider stated).
 * `summarizer` is the host's, or the default built by `makeSummarizer` when the host gave none.
 */
export function resolveCompaction(
  options: AgentCompactionOptions | undefined,
  window: number,
  maxOutputTokens: number,
  makeSummarizer: () => Summarizer,
): ResolvedCompaction {
  const summaryPrompt = Math.ceil(SUMMARY_SYSTEM.length / 4) + 64;
  return {
    reserveTokens: options?.reserveTokens ?? Math.min(16_384, Math.floor(window / 4)),
    keepRecentTokens: options?.keepRecentTokens ?? Math.min(20_000, Math.floor(window / 3)),
    maxSummaryInputTokens:
      options?.maxSummaryInputTokens ??
      Math.max(
        64,
        Math.floor(((window - summaryMaxTokens(window, maxOutputTokens) - summaryPrompt) * 3) / 4),
      ),
    summarizer: options?.summarizer ?? makeSummarizer(),
  };
}

/** Estimated input tokens of a request holding `messages`, `system` and `tools` for `model`. */
export function estimateRequestTokens(
  messages: readonly Message[],
  model: ModelInfo,
  system: string | undefined,
  tools: readonly ToolDecl[],
): number {
  let overhead = system?.length ?? 0;
  for (const t of tools)
    overhead += t.name.length + t.description.length + JSON.stringify(t.inputSchema).length;
  return (
    estimateTokens(messages as Message[], { imageTokenRule: model.imageTokenRule }) + Math.ceil(overhead / 4)
  );
}

/**
 * The context size the next request will have: the larger of the estimate over everything and, when the provider
 * reported usage on an assistant message at index >= `usageFloor`, that usage (uncached + cached input + output
 * tokens: the real size of the context up to that answer) plus the estimate of the messages after it. Reported usage
 * corrects an estimate that undercounts (pictures, code, non-English text); the estimate covers what came later.
 */
export function contextTokens(
  messages: readonly Message[],
  usageFloor: number,
  model: ModelInfo,
  system: string | undefined,
  tools: readonly ToolDecl[],
): number {
  const estimate = estimateRequestTokens(messages, model, system, tools);
  for (let i = messages.length - 1; i >= usageFloor; i--) {
    const m = messages[i];
    if (m?.role !== 'assistant' || m.usage === undefined) continue;
    const u = m.usage;
    const reported = u.inputTokens + (u.cacheReadTokens ?? 0) + (u.cacheWriteTokens ?? 0) + u.outputTokens;
    if (reported === 0) continue;
    const after = estimateTokens(messages.slice(i + 1) as Message[], {
      imageTokenRule: model.imageTokenRule,
    });
    return Math.max(estimate, reported + after);
  }
  return estimate;
}

/** The summary request's system prompt. */
export const SUMMARY_SYSTEM =
  'You write the summary that replaces the earlier part of a conversation between a user and an AI agent with tools. ' +
  'The agent will continue from your summary alone, so keep every fact it still needs: the goal, decisions, file ' +
  'paths, names, numbers, results of tool calls, what was tried and failed, and what remains to do. Images and PDFs ' +
  'appear only as placeholders such as [image: image/png 1200x800] from tool read(path="shot.png"): you cannot see ' +
  'them, so keep what the conversation itself says about them (which file, who produced it, what the messages say ' +
  'it showed) and never invent their content. A part may begin with the summary of what came before it: merge both ' +
  'into one summary. Text marked [… N characters cut …] was shortened for you. Write plain prose and short lists, ' +
  'no preamble.';

export interface ProviderSummarizerOptions {
  /** Called with the usage of each summary request (for cost accounting). */
  onUsage?: (usage: Usage, model: string | undefined) => void;
  /** `max_tokens` of a summary. Default: `summaryMaxTokens(window, maxOutputTokens)` (at most 4,096). */
  maxTokens?: number;
}

/** A summarizer that asks `model` through `provider` (no tools, one request per round, its text is the summary). */
export function providerSummarizer(
  provider: Provider,
  model: ModelInfo,
  options: ProviderSummarizerOptions = {},
): Summarizer {
  return async (request) => {
    const messages: Message[] = [
      {
        role: 'user',
        content: [
          {
            type: 'text',
            text: `Summarize this conversation:\n\n<conversation>\n${request.text}\n</conversation>`,
          },
        ],
      },
    ];
    const { body } = serializeRequest(messages, model, {
      system: SUMMARY_SYSTEM,
      maxTokens:
        options.maxTokens ?? summaryMaxTokens(model.limits.contextWindow, model.limits.maxOutputTokens),
    });
    const message = await collectStream(
      provider.stream({ model: model.id, body }, { signal: request.signal }),
    );
    if (message.usage) options.onUsage?.(message.usage, message.model ?? model.id);
    const text = assistantText(message).trim();
    if (text.length === 0) throw new PantoError('ERR_PROVIDER', 'the summarizer model returned no text');
    return text;
  };
}

/** What `agent.compact()` did. */
export interface CompactOutcome {
  tokensBefore: number;
  tokensAfter: number;
  summary: string;
}

/** What the compaction functions read from the agent and tell it. */
export interface CompactionContext {
  readonly options: AgentCompactionOptions | false | undefined;
  readonly provider: Provider;
  readonly model: ModelInfo;
  readonly system: string | undefined;
  readonly tools: readonly ToolDecl[];
  /** The window compaction works with (the model's, or a smaller one the provider stated). */
  contextWindow(): number;
  /** Use a smaller window the provider stated in a context-overflow error. */
  learnWindow(tokens: number): void;
  messages(): readonly Message[];
  /** Assistant messages at this index or later carry usage that measured the current context. */
  usageFloor(): number;
  /** Record a compaction: the session entry, the new conversation, the new usage floor. */
  commit(result: CompactionResult): void;
  /** Usage of a summary request of the default summarizer. */
  onSummaryUsage(usage: Usage, modelId: string | undefined): void;
  emit(event: AgentEvent): void;
  warn(warning: AgentWarning): void;
}

/** Compaction settings for the current window (the host's options, else defaults). */
function settingsOf(ctx: CompactionContext): ResolvedCompaction {
  const options = ctx.options === false ? undefined : ctx.options;
  const window = ctx.contextWindow();
  const { model } = ctx;
  return resolveCompaction(options, window, model.limits.maxOutputTokens, () =>
    providerSummarizer(
      ctx.provider,
      window === model.limits.contextWindow
        ? model
        : { ...model, limits: { ...model.limits, contextWindow: window } },
      { onUsage: (usage, id) => ctx.onSummaryUsage(usage, id) },
    ),
  );
}

function sizeOf(ctx: CompactionContext): number {
  return contextTokens(ctx.messages(), ctx.usageFloor(), ctx.model, ctx.system, ctx.tools);
}

/** Before a request: compact when the context nears the window; a failure is a warning, never an error. */
export async function maybeCompact(ctx: CompactionContext, signal: AbortSignal): Promise<void> {
  if (ctx.options === false) return;
  const settings = settingsOf(ctx);
  const tokens = sizeOf(ctx);
  const window = ctx.contextWindow();
  if (tokens <= window - settings.reserveTokens) return;
  try {
    const out = await compactNow(ctx, signal, false, settings, tokens);
    if (out === null) {
      ctx.warn({
        code: 'compaction-failed',
        message: `the conversation (~${tokens} tokens) nears the context window (${window}) but there is nothing older than the recent messages to compact`,
      });
    }
  } catch (err) {
    if (signal.aborted) return;
    ctx.warn({ code: 'compaction-failed', message: `compaction failed: ${errorMessage(err)}` });
  }
}

/**
 * Compact now. `force` (after a context-overflow refusal) keeps at most a quarter of the window verbatim. Resolves to
 * `null` when there is nothing to compact; rejects with the summarizer's error.
 */
export async function compactNow(
  ctx: CompactionContext,
  signal: AbortSignal,
  force: boolean,
  settings: ResolvedCompaction = settingsOf(ctx),
  tokens: number = sizeOf(ctx),
): Promise<CompactOutcome | null> {
  const window = ctx.contextWindow();
  const keepRecentTokens = force
    ? Math.min(settings.keepRecentTokens, Math.floor(window / 4))
    : settings.keepRecentTokens;
  ctx.emit({ type: 'compaction_start', tokens, contextWindow: window });
  const out = await compact({ messages: ctx.messages() as Message[] }, settings.summarizer, {
    keepRecentTokens,
    maxSummaryInputTokens: settings.maxSummaryInputTokens,
    imageTokenRule: ctx.model.imageTokenRule,
    isOverflow: isContextOverflow,
    signal,
  });
  if (out === null) return null;
  ctx.commit(out);
  const { tokensBefore, tokensAfter, summary } = out.compaction;
  ctx.emit({ type: 'compaction_end', tokensBefore, tokensAfter, summary });
  return { tokensBefore, tokensAfter, summary };
}

/**
 * Before a request, after `maybeCompact`: a context larger than the window is compacted once more, keeping at most a
 * quarter of it (as after an overflow refusal). Resolves to the error that ends the run when it still does not fit —
 * a request is never sent knowing it cannot fit — else undefined.
 */
export async function ensureFits(
  ctx: CompactionContext,
  signal: AbortSignal,
): Promise<PantoError | undefined> {
  // The estimate alone: usage a provider reported past the window is nonsense (it cannot have read that much).
  const estimate = () => estimateRequestTokens(ctx.messages(), ctx.model, ctx.system, ctx.tools);
  const window = ctx.contextWindow();
  let tokens = estimate();
  if (tokens <= window) return undefined;
  if (ctx.options !== false) {
    try {
      await compactNow(ctx, signal, true);
    } catch (err) {
      if (signal.aborted) return undefined;
      ctx.warn({ code: 'compaction-failed', message: `compaction failed: ${errorMessage(err)}` });
    }
    tokens = estimate();
    if (tokens <= window) return undefined;
  }
  return new PantoError(
    'ERR_MODEL_CAPABILITY',
    `the conversation (~${tokens} tokens with the system prompt and tool declarations) does not fit the context window (${window} tokens) of model '${ctx.model.id}' ${ctx.options === false ? 'and compaction is off' : 'even after compaction'}; it was not sent`,
  );
}

/** After a context-overflow refusal: learn a stated window, compact (forced). True when a retry may help. */
export async function recoverFromOverflow(
  ctx: CompactionContext,
  error: ProviderError,
  signal: AbortSignal,
): Promise<boolean> {
  const before = ctx.contextWindow();
  const stated = statedContextWindow(error);
  const smaller = stated !== undefined && stated < before;
  if (smaller) ctx.learnWindow(stated);
  const learned = smaller
    ? ` The provider states a context window of ${stated} tokens (the model was set to ${before}); compaction now uses ${stated}.`
    : '';
  const refused = `the provider refused the request as longer than the context window (${error.providerMessage})`;
  if (ctx.options === false) {
    ctx.warn({
      code: 'context-overflow',
      message: `${refused}; compaction is off, so it was not retried.${learned}`,
    });
    return false;
  }
  ctx.warn({ code: 'context-overflow', message: `${refused}; compacting and retrying once.${learned}` });
  try {
    return (await compactNow(ctx, signal, true)) !== null;
  } catch (err) {
    if (!signal.aborted)
      ctx.warn({ code: 'compaction-failed', message: `compaction failed: ${errorMessage(err)}` });
    return false;
  }
}
