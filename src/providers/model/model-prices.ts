/**
 * Prices of the catalog's models and the cost of a turn's `Usage`.
 *
 * Prices are US dollars per million tokens at the providers' published list prices (standard tier, prompts up to
 * 200k tokens where a provider charges more above that; checked 2025-11). They change: a host that bills from them
 * should pass its own `ModelPrice` (the `Agent`'s `price` option). An id the table does not know has no price
 * (`priceOf` returns `undefined`), never a guess.
 *
 * Cache accounting follows each provider: Anthropic bills cache writes (`cacheWriteTokens`, 1.25x input for the 5
 * minute cache) and cache reads (0.1x input) separately from uncached input; OpenAI and Gemini bill cached input at
 * their cached-input price. `Usage.inputTokens` never includes cached tokens (every parser subtracts them).
 */

import type { Usage } from '../../conversation.js';
import { PantoError } from '../../errors.js';

/** US dollars per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  /** Input read from a prompt cache. Default: `input`. */
  cacheRead?: number;
  /** Input written to a prompt cache (Anthropic). Default: `input`. */
  cacheWrite?: number;
}

/** What one `Usage` cost, in US dollars, per kind of token and in total. */
export interface UsageCost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  total: number;
}

const claude = (input: number, output: number): ModelPrice => ({
  input,
  output,
  cacheRead: input / 10,
  cacheWrite: input * 1.25,
});

/** First match wins: specific patterns before general ones (ids as the catalog matches them). */
const PRICES: ReadonlyArray<readonly [RegExp, ModelPrice]> = [
  [/^claude-opus-4-[5-9]/, claude(5, 25)],
  [/^claude-opus-4/, claude(15, 75)],
  [/^claude-sonnet-4/, claude(3, 15)],
  [/^claude-haiku-4/, claude(1, 5)],
  [/^o3-mini/, { input: 1.1, output: 4.4, cacheRead: 0.55 }],
  [/^o4-mini/, { input: 1.1, output: 4.4, cacheRead: 0.275 }],
  [/^o3/, { input: 2, output: 8, cacheRead: 0.5 }],
  [/^gpt-5(\.\d+)?-mini/, { input: 0.25, output: 2, cacheRead: 0.025 }],
  [/^gpt-5(\.\d+)?-nano/, { input: 0.05, output: 0.4, cacheRead: 0.005 }],
  [/^gpt-5/, { input: 1.25, output: 10, cacheRead: 0.125 }],
  [/^gpt-4\.1-mini/, { input: 0.4, output: 1.6, cacheRead: 0.1 }],
  [/^gpt-4\.1-nano/, { input: 0.1, output: 0.4, cacheRead: 0.025 }],
  [/^gpt-4\.1/, { input: 2, output: 8, cacheRead: 0.5 }],
  [/^gpt-4o-mini/, { input: 0.15, output: 0.6, cacheRead: 0.075 }],
  [/^(gpt-4o|chatgpt-4o)/, { input: 2.5, output: 10, cacheRead: 1.25 }],
  [/^gemini-3(\.\d+)?-pro/, { input: 2, output: 12, cacheRead: 0.2 }],
  [/^gemini-2\.5-pro/, { input: 1.25, output: 10, cacheRead: 0.125 }],
  [/^gemini-2\.5-flash-lite/, { input: 0.1, output: 0.4, cacheRead: 0.01 }],
  [/^gemini-2\.5-flash/, { input: 0.3, output: 2.5, cacheRead: 0.03 }],
  [/^gemini-2\.0-flash-lite/, { input: 0.075, output: 0.3 }],
  [/^gemini-2\.0-flash/, { input: 0.1, output: 0.4, cacheRead: 0.025 }],
];

/**
 * The list price of a catalog model, or `undefined` when the table does not know the id. A gateway id
 * (`anthropic/claude-sonnet-4.5`) is priced as its model (gateways may add a fee).
 */
export function priceOf(modelId: string): ModelPrice | undefined {
  if (typeof modelId !== 'string' || modelId === '') return undefined;
  const slash = modelId.lastIndexOf('/');
  const id = slash >= 0 ? modelId.slice(slash + 1) : modelId;
  for (const [pattern, price] of PRICES) if (pattern.test(id)) return { ...price };
  return undefined;
}

/**
 * The cost of `usage` at `price`. Missing cache prices count at the input price.
 *
 * @throws PantoError `ERR_INVALID_ARGUMENT` when a price is not a finite number >= 0.
 */
export function usageCost(usage: Usage, price: ModelPrice): UsageCost {
  checkPrice(price);
  const perToken = (perMillion: number) => perMillion / 1_000_000;
  const input = count(usage.inputTokens) * perToken(price.input);
  const output = count(usage.outputTokens) * perToken(price.output);
  const cacheRead = count(usage.cacheReadTokens) * perToken(price.cacheRead ?? price.input);
  const cacheWrite = count(usage.cacheWriteTokens) * perToken(price.cacheWrite ?? price.input);
  return { input, output, cacheRead, cacheWrite, total: input + output + cacheRead + cacheWrite };
}

/** Throws `ERR_INVALID_ARGUMENT` unless every field of `price` is a finite number >= 0. */
export function checkPrice(price: ModelPrice): void {
  if (price === null || typeof price !== 'object') {
    throw new PantoError('ERR_INVALID_ARGUMENT', 'a model price must be an object {input, output, ...}');
  }
  for (const key of ['input', 'output', 'cacheRead', 'cacheWrite'] as const) {
    const v = price[key];
    if (v === undefined && (key === 'cacheRead' || key === 'cacheWrite')) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
      throw new PantoError(
        'ERR_INVALID_ARGUMENT',
        `model price ${key} must be a finite number >= 0 (US dollars per million tokens), got ${String(v)}`,
      );
    }
  }
}

function count(n: number | undefined): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0;
}
