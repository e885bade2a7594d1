/**
 * When the agent compacts, and the default summarizer (the agent's own provider and model).
 *
 * Trigger: the context size (`contextTokens`: the estimate — `estimateTokens` with the model's image rule, plus the
 * system prompt and tool declarations at ~4 characters per token — or, when larger, the usage the provider last
 * reported plus the estimate of what came after it) exceeds `contextWindow - reserveTokens`. `reserveTokens` is the
 * margin for the answer and for estimate error.
 */

import type { Summarizer } from '../compaction/compact.js';
import { estimateTokens } from '../compaction/estimate-tokens.js';
import { assistantText, type Message, type Usage } from '../conversation.js';
import { PantoError } from '../errors.js';
import type { ModelInfo } from '../providers/model-info.js';
import { collectStream } from '../providers/stream/collect-stream.js';
import type { Provider } from '../providers/transport/http-provider.js';
import type { ToolDecl } from '../tool.js';
import { serializeRequest } from './serialize-request.js';

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
            text:
              `Summarize this conversation:\n\n<conversation>\n${request.text}\n</conversation>` +
              (request.focus === undefined
                ? ''
                : `\n\nThe user asks the summary to focus on: ${request.focus}`),
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
