import { CliError, EXIT_USAGE } from './cli-error.js';

/** Parse a positive integer flag value; undefined when absent; a usage error when malformed. */
export function parseIntOption(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) <= 0) {
    throw new CliError(`${flag} expects a positive integer, got '${value}'`, EXIT_USAGE);
  }
  return Number(value);
}
