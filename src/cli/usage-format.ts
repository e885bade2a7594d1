/**
 * Token counts for people: `1,200 in · 3,400 cache read · 500 cache write · 56 out`, and session totals summed from
 * the usage each answer reported. Cached tokens are shown apart because they are billed differently. Costs come from
 * the library's price table (list prices); a model it does not know has no cost shown, never a guess.
 */
import type { AssistantMessage, Message, Usage } from '../conversation.js';
import { type ModelPrice, priceOf, usageCost } from '../providers/index.js';

const grouped = new Intl.NumberFormat('en-US');

export function formatCount(n: number): string {
  return grouped.format(n);
}

/** Usage of one answer (or a sum) as one short line; cache fields only when non-zero. */
export function formatUsage(u: Usage): string {
  const parts = [`${formatCount(u.inputTokens)} in`];
  if (u.cacheReadTokens) parts.push(`${formatCount(u.cacheReadTokens)} cache read`);
  if (u.cacheWriteTokens) parts.push(`${formatCount(u.cacheWriteTokens)} cache write`);
  parts.push(`${formatCount(u.outputTokens)} out`);
  return parts.join(' · ');
}

/** The sum of two usages. */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: (a.cacheReadTokens ?? 0) + (b.cacheReadTokens ?? 0),
    cacheWriteTokens: (a.cacheWriteTokens ?? 0) + (b.cacheWriteTokens ?? 0),
  };
}

export const ZERO_USAGE: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

/** The usage every assistant message of `messages` reported, summed. */
export function sumUsage(messages: readonly Message[]): Usage {
  let total = ZERO_USAGE;
  for (const m of messages) if (m.role === 'assistant' && m.usage) total = addUsage(total, m.usage);
  return total;
}

/** `$0.0123` (4 decimals under a dollar, 2 above). */
export function formatDollars(n: number): string {
  return `$${n < 1 ? n.toFixed(4) : n.toFixed(2)}`;
}

/**
 * What an answer cost at the list price of the model that wrote it (`message.model`, else `fallbackModel`), or
 * undefined when the price table does not know that model. `declared` (the config file's price) wins.
 */
export function messageCost(
  message: AssistantMessage,
  fallbackModel: string,
  declared?: ModelPrice,
): number | undefined {
  if (message.usage === undefined) return undefined;
  const price = declared ?? priceOf(message.model ?? fallbackModel);
  return price === undefined ? undefined : usageCost(message.usage, price).total;
}
