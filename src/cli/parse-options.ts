import { CliError, EXIT_USAGE } from './cli-error.js';

/**
 * Parse a positive integer flag value (at most 2^53 - 1: beyond that a number is no longer exact); undefined when
 * absent; a usage error when malformed. A long value is cut in the message.
 */
export function parseIntOption(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
  if (!/^\d+$/.test(value) || Number(value) <= 0) {
    throw new CliError(`${flag} expects a positive integer, got '${shown}'`, EXIT_USAGE);
  }
  if (!Number.isSafeInteger(Number(value))) {
    throw new CliError(`${flag} expects a positive integer, got '${shown}' (too large)`, EXIT_USAGE);
  }
  return Number(value);
}
