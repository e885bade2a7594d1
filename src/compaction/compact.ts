/**
 * Compaction: replace the older part of a conversation with a summary written by a host-supplied summarizer, keeping
 * the most recent messages verbatim. Pure apart from the summarizer call; recording it is `SessionLog.appendCompaction`.
 */

import type { Conversation, Message, UserMessage } from '../conversation.js';
import { PantoError } from '../errors.js';
import { type EstimateOptions, estimateTokens } from './estimate-tokens.js';
import { findCutPoint } from './find-cut-point.js';
import { renderTranscript } from './render-transcript.js';

/** What the summarizer receives. */
export interface SummaryRequest {
  /** The summarized messages as text; images and PDFs described (see render-transcript.ts), never dropped. */
  text: string;
  /** The summarized messages themselves (system messages excluded: they are kept verbatim). */
  messages: readonly Message[];
  signal?: AbortSignal;
}

/** Host callback that writes the summary (typically a model call). Must resolve to a non-empty string. */
export type Summarizer = (request: SummaryRequest) => Promise<string>;

export interface CompactOptions extends EstimateOptions {
  /** Estimated tokens kept verbatim at the end (default 20 000). */
  keepRecentTokens?: number;
  signal?: AbortSignal;
}

/**
 * A compaction, as `SessionLog.appendCompaction` records it. session/ declares the same shape as `CompactionInput`
 * (neither module imports the other); test/compaction/compaction-record.test-d.ts keeps the two identical.
 */
export interface CompactionRecord {
  summary: string;
  /** Messages replacing `messages[0 .. firstKeptIndex)`: the system messages found there, then the summary message. */
  replacement: Message[];
  /** Index (in the compacted conversation) of the first message kept verbatim. */
  firstKeptIndex: number;
  /** Length of the compacted conversation. */
  messageCountBefore: number;
  tokensBefore: number;
  tokensAfter: number;
}

export interface CompactionResult {
  /** `replacement` followed by the kept messages. */
  conversation: Conversation;
  compaction: CompactionRecord;
}

/** Text that opens every summary message. */
export const SUMMARY_PREFIX = 'Summary of the earlier part of this conversation (it was compacted):\n\n';

/** The user message that carries a summary. */
export function summaryMessage(summary: string): UserMessage {
  return { role: 'user', content: [{ type: 'text', text: `${SUMMARY_PREFIX}${summary}` }] };
}

/**
 * Compact `conversation`: find the cut with `findCutPoint(messages, keepRecentTokens)`, ask `summarize` for a summary
 * of the messages before it, and return the new conversation plus the record to log. Returns `null` when there is
 * nothing to compact (see `findCutPoint`). The input is not modified.
 *
 * Errors: `ERR_ABORTED` when `signal` fires; `ERR_INVALID_ARGUMENT` when the summarizer resolves to something other
 * than a non-empty string; a summarizer rejection propagates unchanged.
 */
export async function compact(
  conversation: Conversation,
  summarize: Summarizer,
  options: CompactOptions = {},
): Promise<CompactionResult | null> {
  const { messages } = conversation;
  const cut = findCutPoint(messages, options.keepRecentTokens ?? 20_000, options);
  if (cut === 0) return null;
  const older = messages.slice(0, cut);
  const system = older.filter((m) => m.role === 'system');
  const summarized = older.filter((m) => m.role !== 'system');
  const { signal } = options;
  if (signal?.aborted) throw new PantoError('ERR_ABORTED', 'compaction aborted', { cause: signal.reason });
  const request: SummaryRequest = { text: renderTranscript(summarized), messages: summarized };
  if (signal) request.signal = signal;
  const summary = await summarize(request);
  if (signal?.aborted) throw new PantoError('ERR_ABORTED', 'compaction aborted', { cause: signal.reason });
  if (typeof summary !== 'string' || summary.trim() === '') {
    throw new PantoError('ERR_INVALID_ARGUMENT', 'the summarizer must resolve to a non-empty string');
  }
  const replacement: Message[] = [...system, summaryMessage(summary)];
  const next = [...replacement, ...messages.slice(cut)];
  return {
    conversation: { messages: next },
    compaction: {
      summary,
      replacement,
      firstKeptIndex: cut,
      messageCountBefore: messages.length,
      tokensBefore: estimateTokens(messages, options),
      tokensAfter: estimateTokens(next, options),
    },
  };
}
