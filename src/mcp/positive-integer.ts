/**
 * The one check of the MCP servers' count and size options (`createMcpServer`, `serveMcpStdio`, `serveMcpHttp`):
 * the value, or the default when it is `undefined`, must be a positive integer, else `ERR_INVALID_ARGUMENT` naming
 * the function and the option.
 */

import { PantoError } from '../errors.js';

/** `value ?? fallback`, checked; throws `ERR_INVALID_ARGUMENT` "`<fn>: <name> must be a positive integer, got …`". */
export function positiveInteger(
  value: number | undefined,
  fallback: number,
  fn: string,
  name: string,
): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 1) {
    throw new PantoError('ERR_INVALID_ARGUMENT', `${fn}: ${name} must be a positive integer, got ${v}`);
  }
  return v;
}
