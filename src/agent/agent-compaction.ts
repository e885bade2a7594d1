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
import { assistantText, type Message } from '../conversation.js';
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
}

export interface ResolvedCompaction {
  reserveTokens: number;
  keepRecentTokens: number;
  summarizer: Summarizer;
}

export function resolveCompaction(
  options: AgentCompactionOptions | undefined,
  model: ModelInfo,
  provider: Provider,
): ResolvedCompaction {
  const window = model.limits.contextWindow;
  return {
    reserveTokens: options?.reserveTokens ?? Math.min(16_384, Math.floor(window / 4)),
    keepRecentTokens: options?.keepRecentTokens ?? Math.min(20_000, Math.floor(window / 3)),
    summarizer: options?.summarizer ?? providerSummarizer(provider, model),
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

const SUMMARY_SYSTEM =
  'You write the summary that replaces the earlier part of a conversation between a user and an AI agent with tools. ' +
  'The agent will continue from your summary alone, so keep every fact it still needs: the goal, decisions, file ' +
  'paths, names, numbers, results of tool calls, what was tried and failed, and what remains to do. Describe images ' +
  'and documents by what they showed. Write plain prose and short lists, no preamble.';

/** A summarizer that asks `model` through `provider` (no tools, one request, its text is the summary). */
export function providerSummarizer(provider: Provider, model: ModelInfo): Summarizer {
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
      maxTokens: Math.min(model.limits.maxOutputTokens, 4096),
    });
    const message = await collectStream(
      provider.stream({ model: model.id, body }, { signal: request.signal }),
    );
    const text = assistantText(message).trim();
    if (text.length === 0) throw new PantoError('ERR_PROVIDER', 'the summarizer model returned no text');
    return text;
  };
}
