/** Token and cost totals over the model requests of an agent's session. */

import type { Usage } from '../conversation.js';
import { type ModelPrice, type UsageCost, usageCost } from '../providers/model-prices.js';

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

/** Add one request's usage to `totals` (in place); returns its cost, or `undefined` without a price. */
export function addUsage(
  totals: UsageTotals,
  usage: Usage,
  price: ModelPrice | undefined,
): UsageCost | undefined {
  totals.requests++;
  totals.inputTokens += usage.inputTokens;
  totals.outputTokens += usage.outputTokens;
  totals.cacheReadTokens += usage.cacheReadTokens ?? 0;
  totals.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
  if (price === undefined) {
    totals.unpricedRequests++;
    return undefined;
  }
  const cost = usageCost(usage, price);
  totals.cost += cost.total;
  return cost;
}
