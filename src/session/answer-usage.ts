/**
 * The token counts of a session's answers (assistant messages with `usage`), summed per model: what a resumed agent
 * counts without reading the history. A compaction entry records them for every entry before it (`usageBefore`), so
 * a log opened from its latest compaction knows them by reading only what follows it.
 */

import type { Message } from '../conversation.js';
import type { ModelUsage } from './session-entry.js';

/** A count as stored: negative, NaN and non-numbers are 0, fractions rounded down, capped at 2^53 - 1. */
function count(n: unknown): number {
  return typeof n === 'number' && n > 0 ? Math.min(Math.floor(n), Number.MAX_SAFE_INTEGER) : 0;
}

const plus = (a: number, b: number) => Math.min(a + b, Number.MAX_SAFE_INTEGER);

/** Add `message`'s usage (an assistant message with `usage`; others are ignored) to `totals`, in place. */
export function addAnswer(totals: ModelUsage[], message: Message): void {
  if (message.role !== 'assistant' || typeof message.usage !== 'object' || message.usage === null) return;
  const u = message.usage;
  const model = typeof message.model === 'string' ? message.model : undefined;
  let t = totals.find((x) => x.model === model);
  if (t === undefined) {
    t = { requests: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    if (model !== undefined) t.model = model;
    totals.push(t);
  }
  t.requests = plus(t.requests, 1);
  t.inputTokens = plus(t.inputTokens, count(u.inputTokens));
  t.outputTokens = plus(t.outputTokens, count(u.outputTokens));
  t.cacheReadTokens = plus(t.cacheReadTokens, count(u.cacheReadTokens));
  t.cacheWriteTokens = plus(t.cacheWriteTokens, count(u.cacheWriteTokens));
}

/** A deep copy. */
export function copyUsage(totals: readonly ModelUsage[]): ModelUsage[] {
  return totals.map((t) => ({ ...t }));
}
