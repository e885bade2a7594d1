/**
 * Compaction: replace the older part of a conversation with a summary written by a host-supplied summarizer, keeping
 * the most recent messages verbatim — except a kept tool result whose text alone is longer than `keepRecentTokens`:
 * it is shortened (head and tail kept, a note in the cut; shorten-result.ts), so one oversized result can never keep a
 * compacted conversation over the window. Pure apart from the summarizer call; recording it is
 * `SessionLog.appendCompaction`.
 */

import type { Conversation, Message, ToolResultBlock, UserMessage } from '../conversation.js';
import { PantoError } from '../errors.js';
import { type EstimateOptions, estimateTokens } from './estimate-tokens.js';
import { findCutPoint, validCutPoints } from './find-cut-point.js';
import { renderSections, shortenText } from './render-transcript.js';
import { shortenToolResult } from './shorten-result.js';

/** What the summarizer receives. */
export interface SummaryRequest {
  /**
   * The messages to summarize as text; images and PDFs appear as placeholders (see render-transcript.ts), never as
   * pictures. In round 2 and later it starts with the previous round's summary (`[summary of the conversation before
   * this part]`), so a summarizer that ignores `round` still writes a summary of everything so far.
   */
  text: string;
  /** The messages of this round (system messages excluded: they are kept verbatim). */
  messages: readonly Message[];
  /** Which summarizer call this is (`index` from 1) and how many rounds this compaction makes. */
  round: { index: number; count: number };
  signal?: AbortSignal;
}

/** Host callback that writes the summary (typically a model call). Must resolve to a non-empty string. */
export type Summarizer = (request: SummaryRequest) => Promise<string>;

export interface CompactOptions extends EstimateOptions {
  /** Estimated tokens kept verbatim at the end (default 20 000). */
  keepRecentTokens?: number;
  /**
   * Largest transcript one summarizer call receives, in estimated tokens (the summarizer model's window minus its
   * answer and prompt). A longer transcript is summarized in rounds: each round gets the previous round's summary
   * and the next messages. Text parts longer than a quarter of it are shortened (head and tail kept). Default: no
   * limit (one round, nothing shortened).
   */
  maxSummaryInputTokens?: number;
  /**
   * Most summarizer calls per compaction (default 8). When more would be needed, the oldest messages are left out of
   * the summary and the first round says how many.
   */
  maxRounds?: number;
  /**
   * Recognises a summarizer error that means "the input is too long for the model" (e.g. the agent's
   * `isContextOverflow`): the rounds are then redone with half the input size, at most 3 times.
   */
  isOverflow?: (error: unknown) => boolean;
  signal?: AbortSignal;
}

/**
 * A compaction, as `SessionLog.appendCompaction` records it. session/ declares the same shape as `CompactionInput`
 * (neither module imports the other); test/compaction/compaction-record.test-d.ts keeps the two identical.
 */
export interface CompactionRecord {
  /** The summary (empty when nothing was summarized and a kept tool result was only shortened). */
  summary: string;
  /**
   * Messages replacing `messages[0 .. firstKeptIndex)`: the system messages found before the cut, the summary message
   * (when there was something to summarize), then the kept messages up to the last shortened tool result, if any.
   */
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
 * of the messages before it (in rounds when they exceed `maxSummaryInputTokens`), shorten each kept tool-results
 * message whose text is longer than `keepRecentTokens` (at ~`charsPerToken` characters per token) to that, and return
 * the new conversation plus the record to log. Returns `null` when there is nothing to compact: nothing before the cut
 * but system messages (kept verbatim) and no kept tool result to shorten. The input is not modified.
 *
 * Errors: `ERR_ABORTED` when `signal` fires; `ERR_INVALID_ARGUMENT` when the summarizer resolves to something other
 * than a non-empty string or an option is out of range; a summarizer rejection propagates unchanged (an overflow one
 * after the retries `isOverflow` allows).
 */
export async function compact(
  conversation: Conversation,
  summarize: Summarizer,
  options: CompactOptions = {},
): Promise<CompactionResult | null> {
  const { messages } = conversation;
  const maxInput = options.maxSummaryInputTokens;
  if (maxInput !== undefined && !(Number.isFinite(maxInput) && maxInput >= 64)) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `maxSummaryInputTokens must be a number >= 64, got ${maxInput}`,
    );
  }
  const maxRounds = options.maxRounds ?? 8;
  if (!Number.isInteger(maxRounds) || maxRounds < 1) {
    throw new PantoError('ERR_INVALID_ARGUMENT', `maxRounds must be an integer >= 1, got ${maxRounds}`);
  }
  const keepRecentTokens = options.keepRecentTokens ?? 20_000;
  const cut = findCutPoint(messages, keepRecentTokens, options);
  const shortened = shortenKept(messages, cut, keepRecentTokens * (options.charsPerToken ?? 4));
  const older = messages.slice(0, cut);
  const system = older.filter((m) => m.role === 'system');
  const summarized = older.filter((m) => m.role !== 'system');
  // Only system messages before the cut (or none): they are kept verbatim, so there is nothing to summarize (and no
  // round would run: without this the retry loop below never got a summary and spun forever).
  if (summarized.length === 0 && shortened.length === 0) return null;
  const { signal } = options;
  let summary = '';
  if (summarized.length > 0) summary = await summarizeWithRetries(summarized, summarize, maxRounds, options);
  const replacement: Message[] = [
    ...system,
    ...(summary === '' ? [] : [summaryMessage(summary)]),
    ...shortened,
  ];
  const firstKeptIndex = cut + shortened.length;
  checkAborted(signal);
  const next = [...replacement, ...messages.slice(firstKeptIndex)];
  return {
    conversation: { messages: next },
    compaction: {
      summary,
      replacement,
      firstKeptIndex,
      messageCountBefore: messages.length,
      tokensBefore: estimateTokens(messages, options),
      tokensAfter: estimateTokens(next, options),
    },
  };
}

/** Summarize `summarized` in rounds; an overflow rejection (`isOverflow`) redoes them with half the input, 3 times at most. */
async function summarizeWithRetries(
  summarized: readonly Message[],
  summarize: Summarizer,
  maxRounds: number,
  options: CompactOptions,
): Promise<string> {
  const { signal } = options;
  let budget = options.maxSummaryInputTokens;
  // At most 1 + 3 attempts: each either returns or throws; only an overflow rejection is retried.
  for (let overflowRetries = 0; ; overflowRetries++) {
    checkAborted(signal);
    try {
      return await summarizeInRounds(summarized, summarize, budget, maxRounds, options);
    } catch (err) {
      if (signal?.aborted || overflowRetries >= 3 || !options.isOverflow?.(err)) throw err;
      // The summarizer's model counts more tokens than the estimate: halve the input and redo the rounds.
      const used = budget ?? Math.max(128, estimateTokens(summarized, options));
      budget = Math.max(64, Math.floor(used / 2));
    }
  }
}

/**
 * The kept messages from `cut` up to the first valid cut (see `validCutPoints`) after the last tool-results message
 * whose text is longer than `maxChars`, each such message shortened (its results share `maxChars`); empty when none
 * is. They go into the replacement (a compaction record cannot change kept entries), so the cut moves past them.
 */
function shortenKept(messages: readonly Message[], cut: number, maxChars: number): Message[] {
  let last = -1;
  const out: Message[] = [];
  for (let i = cut; i < messages.length; i++) {
    const m = messages[i] as Message;
    if (m.role !== 'tool' || resultsText(m.results) <= maxChars) {
      out.push(m);
      continue;
    }
    const share = Math.floor(maxChars / m.results.length);
    out.push({ ...m, results: m.results.map((r) => shortenToolResult(r, share)) });
    last = i;
  }
  if (last < 0) return [];
  // Never separate a call from its result: the next valid cut (the end of the conversation always is one).
  const valid = validCutPoints(messages);
  let end = last + 1;
  while (end < messages.length && !valid[end]) end++;
  return out.slice(0, end - cut);
}

function resultsText(results: ToolResultBlock[]): number {
  let n = 0;
  for (const r of results) for (const p of r.parts) if (p?.type === 'text') n += p.text.length;
  return n;
}

const PREVIOUS = '[summary of the conversation before this part]';

function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new PantoError('ERR_ABORTED', 'compaction aborted', { cause: signal.reason });
}

/**
 * Rounds of at most `budget` estimated tokens each; the summary of the last round (a non-empty string).
 * @throws PantoError `ERR_INTERNAL` when no round would run (`messages` rendered to no chunk: `compact` never calls it
 * so, as it returns `null` first when nothing is left to summarize).
 */
async function summarizeInRounds(
  messages: readonly Message[],
  summarize: Summarizer,
  budget: number | undefined,
  maxRounds: number,
  options: CompactOptions,
): Promise<string> {
  const cpt = options.charsPerToken ?? 4;
  // Text parts beyond a quarter of a round are shortened; the previous summary may take up to a third of a round.
  const maxPartChars = budget === undefined ? undefined : Math.floor((budget * cpt) / 4);
  const sections = renderSections(messages, maxPartChars === undefined ? {} : { maxPartChars });
  let chunks: Array<{ from: number; to: number; chars: number }>;
  if (budget === undefined) {
    chunks = [{ from: 0, to: sections.length, chars: 0 }];
  } else {
    const total = sections.reduce((n, s) => n + s.length + 2, 0);
    const single = total <= budget * cpt;
    const room = single ? budget * cpt : Math.floor((budget * cpt * 2) / 3);
    chunks = [];
    let current = { from: 0, to: 0, chars: 0 };
    sections.forEach((section, i) => {
      const size = Math.min(section.length, room) + 2;
      if (current.to > current.from && current.chars + size > room) {
        chunks.push(current);
        current = { from: i, to: i, chars: 0 };
      }
      current.to = i + 1;
      current.chars += size;
    });
    if (current.to > current.from) chunks.push(current);
    // Each section was kept below `room`; a single over-long one is cut when rendered below.
    for (const c of chunks) c.chars = room;
  }
  let dropped = 0;
  if (chunks.length > maxRounds) {
    const drop = chunks.length - maxRounds;
    dropped = (chunks[drop] as { from: number }).from;
    chunks = chunks.slice(drop);
  }
  if (chunks.length === 0) {
    throw new PantoError('ERR_INTERNAL', 'compaction: no summarizer round to run (nothing to summarize)');
  }
  let summary: string | undefined;
  for (let i = 0; i < chunks.length; i++) {
    checkAborted(options.signal);
    const chunk = chunks[i] as { from: number; to: number; chars: number };
    const parts: string[] = [];
    if (summary !== undefined) parts.push(`${PREVIOUS}\n${summary}`);
    if (i === 0 && dropped > 0) {
      parts.push(
        `[${dropped} earlier message${dropped === 1 ? ' was' : 's were'} left out: too long to summarize in ${maxRounds} rounds]`,
      );
    }
    for (let j = chunk.from; j < chunk.to; j++) {
      const section = sections[j] as string;
      if (section.length > 0) parts.push(budget === undefined ? section : shortenText(section, chunk.chars));
    }
    const request: SummaryRequest = {
      text: parts.join('\n\n'),
      messages: messages.slice(chunk.from, chunk.to),
      round: { index: i + 1, count: chunks.length },
    };
    if (options.signal) request.signal = options.signal;
    const out = await summarize(request);
    checkAborted(options.signal);
    if (typeof out !== 'string' || out.trim() === '') {
      throw new PantoError('ERR_INVALID_ARGUMENT', 'the summarizer must resolve to a non-empty string');
    }
    summary = out;
  }
  if (summary === undefined) throw new PantoError('ERR_INTERNAL', 'compaction: no summarizer round ran');
  return summary;
}
