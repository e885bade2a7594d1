/**
 * One line for an error the user sees without a stack trace: a library error with its stable code
 * (`message [ERR_…]`), a file-system error naming the file (`cannot open x: is a directory`), else the message.
 */
import { isPantoError } from '../errors.js';
import { describeSystemError, isSystemError } from './system-error.js';

export function errorText(err: unknown): string {
  if (isPantoError(err)) return `${err.message} [${err.code}]`;
  if (isSystemError(err)) return describeSystemError(err);
  return err instanceof Error ? err.message : String(err);
}
