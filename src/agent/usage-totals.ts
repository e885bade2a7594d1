/** Token and cost totals over the model requests of an agent's session. */

import type { Usage } from '../conversation.js';
import { addTokens as plus, tokenCount } from '../providers/common/response-common.js';
import { type ModelPrice, type UsageCost, usageCost } from '../providers/model/model-prices.js';

export interface UsageTotals {
  /** Requests that reported usage: model answers and summary requests of compactions. */
  requests: number;
  /** Uncached input tokens. */
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** US dollars over the requests whose model has a price (see model-prices.ts). */
  cost: number;
  /** Requests whose model has no price: their tokens are counted, their cost is not. */
  unpricedRequests: number;
}

export function emptyTotals(): UsageTotals {
  return {
    requests: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    cost: 0,
    unpricedRequests: 0,
  };
}

/**
 * `usage` with every count a non-negative safe integer (`tokenCount`: negative, NaN and non-numbers are 0, fractions
 * rounded down, counts past 2^53 capped); `usage` itself when it already was one. Optional counts stay absent.
 */
export function saneUsage(usage: Usage): Usage {
  const u = usage as unknown as Record<string, unknown>;
  const clean: Usage = { inputTokens: tokenCount(u.inputTokens), outputTokens: tokenCount(u.outputTokens) };
  if (u.cacheReadTokens !== undefined) clean.cacheReadTokens = tokenCount(u.cacheReadTokens);
  if (u.cacheWriteTokens !== undefined) clean.cacheWriteTokens = tokenCount(u.cacheWriteTokens);
  const same =
    clean.inputTokens === u.inputTokens &&
    clean.outputTokens === u.outputTokens &&
    clean.cacheReadTokens === u.cacheReadTokens &&
    clean.cacheWriteTokens === u.cacheWriteTokens;
  return same ? usage : clean;
}

/**
 * Add one request's usage to `totals` (in place); returns its cost, or `undefined` without a price. The counts are
 * taken through `saneUsage` (a resumed log may hold what an older version stored); token totals stop at
 * `Number.MAX_SAFE_INTEGER`.
 */
export function addUsage(
  totals: UsageTotals,
  reported: Usage,
  price: ModelPrice | undefined,
): UsageCost | undefined {
  const usage = saneUsage(reported);
  totals.requests++;
  totals.inputTokens = plus(totals.inputTokens, usage.inputTokens);
  totals.outputTokens = plus(totals.outputTokens, usage.outputTokens);
  totals.cacheReadTokens = plus(totals.cacheReadTokens, usage.cacheReadTokens ?? 0);
  totals.cacheWriteTokens = plus(totals.cacheWriteTokens, usage.cacheWriteTokens ?? 0);
  if (price === undefined) {
    totals.unpricedRequests++;
    return undefined;
  }
  const cost = usageCost(usage, price);
  totals.cost += cost.total;
  return cost;
}
