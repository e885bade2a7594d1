/**
 * Bound on the nesting of tool-call arguments. `JSON.parse` reads any depth, but `JSON.stringify` overflows the stack
 * at a few thousand levels (a `RangeError`), so arguments nested deeper would make every later request (and session
 * save) of the conversation throw.
 *
 * Contract: `nestedDeeperThan` walks iteratively (no recursion on hostile input). `argumentsJson` gives the JSON text
 * of an arguments object a provider sent already parsed, or throws a non-retryable `ProviderError` when it is nested
 * deeper than `MAX_ARGUMENT_DEPTH`.
 */

import { ProviderError } from '../transport/provider-error.js';

/** Deepest nesting of arrays/objects accepted in tool-call arguments (the arguments object itself is level 1). */
export const MAX_ARGUMENT_DEPTH = 256;

/** True when `value` holds arrays/objects nested more than `limit` levels. */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== 'object') continue;
    if (depth > limit) return true;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const child of children)
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

/** `JSON.stringify(args)` for arguments that arrived as an object; a `ProviderError` when they are too deep. */
export function argumentsJson(api: string, args: unknown): string {
  if (nestedDeeperThan(args, MAX_ARGUMENT_DEPTH)) {
    throw new ProviderError({
      api,
      providerMessage: `malformed stream event: tool-call arguments nested deeper than ${MAX_ARGUMENT_DEPTH} levels`,
      retryable: false,
    });
  }
  return JSON.stringify(args);
}
