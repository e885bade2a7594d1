/** Small pieces every response reader shares (whole responses and stream parsers): JSON shapes, token counts, ids, tool-call arguments. */

import type { ToolCallBlock } from '../../conversation.js';
import { PantoError } from '../../errors.js';
import type { ModelApi } from '../model/model-info.js';

/** The error a response parser throws for a body it cannot read. */
export function responseError(api: ModelApi, message: string): PantoError {
  return new PantoError('ERR_PROVIDER', `${api}: ${message}`);
}

/** A JSON object (not null, not an array) or `undefined`. */
export function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * A token count from a usage object: a non-negative safe integer. A number with a fraction is rounded down, one past
 * `Number.MAX_SAFE_INTEGER` (1e300, `Infinity`) is capped there; a negative number (`-Infinity` included), NaN or a
 * non-number is 0. A provider (or a server speaking its protocol) that reports nonsense never makes totals or costs
 * negative or infinite.
 */
export function tokenCount(value: unknown): number {
  if (typeof value !== 'number' || !(value > 0)) return 0;
  return Math.min(Math.floor(value), Number.MAX_SAFE_INTEGER);
}

/**
 * An id a response gave (a tool call's, an output item's): a non-empty string, else `undefined`. A non-string id (an
 * object, a number) counts as missing and the caller synthesises one, as it does for an absent id: never stringified,
 * so two object ids cannot both become `[object Object]` and merge two items into one.
 */
export function idOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The sum of token counts (each already a non-negative safe integer, see `tokenCount`), stopping at
 * `Number.MAX_SAFE_INTEGER` so that a sum of two capped counts stays a safe integer.
 */
export function addTokens(...counts: number[]): number {
  let total = 0;
  for (const count of counts) total = Math.min(total + count, Number.MAX_SAFE_INTEGER);
  return total;
}

/** Raw arguments of a tool call whose argument text was not a JSON object (kept in `providerData.invalidArguments`). */
export interface InvalidToolArguments {
  raw: string;
  error: string;
}

/**
 * Parse a tool call's JSON argument text (the non-streaming parsers and the streaming `MessageBuilder` both use it):
 * empty text is `{}`; text that is not a JSON object yields `input: {}` plus `invalid` for
 * `providerData.invalidArguments`.
 */
export function parseArguments(raw: string): {
  input: Record<string, unknown>;
  invalid?: InvalidToolArguments;
} {
  if (raw.trim() === '') return { input: {} };
  try {
    const parsed: unknown = JSON.parse(raw);
    const obj = asObject(parsed);
    if (obj) return { input: obj };
    return { input: {}, invalid: { raw, error: 'arguments are not a JSON object' } };
  } catch (err) {
    return { input: {}, invalid: { raw, error: (err as Error).message } };
  }
}

/** A tool-call block from a complete response's call: `input` parsed from the argument text by `parseArguments`. */
export function toolCallBlock(id: string, name: string, rawArguments: string): ToolCallBlock {
  const { input, invalid } = parseArguments(rawArguments);
  const block: ToolCallBlock = { type: 'tool_call', id, name, input };
  if (invalid) block.providerData = { invalidArguments: invalid };
  return block;
}
