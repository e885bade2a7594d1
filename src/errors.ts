/**
 * Typed errors. Every error the library throws at its own API boundary is a `PantoError` with a stable `code`;
 * callers branch on `code`, never on `message` (messages may be reworded).
 */

/** Stable error codes. New codes may be added; existing ones never change meaning. */
export type PantoErrorCode =
  | 'ERR_UNSUPPORTED_MEDIA'
  | 'ERR_CORRUPT_MEDIA'
  | 'ERR_MEDIA_TOO_LARGE'
  | 'ERR_INVALID_ARGUMENT'
  | 'ERR_NATIVE_UNAVAILABLE'
  | 'ERR_DUPLICATE_TOOL'
  | 'ERR_UNKNOWN_TOOL'
  | 'ERR_TOOL_LOAD'
  | 'ERR_ABORTED'
  | 'ERR_SESSION_CORRUPT'
  | 'ERR_SESSION_LOCKED'
  | 'ERR_SESSION_FORMAT'
  | 'ERR_SESSION_CHANGED'
  | 'ERR_SESSION_NOT_FOUND'
  | 'ERR_SESSION_STORE'
  | 'ERR_PROVIDER'
  | 'ERR_PROVIDER_AUTH'
  | 'ERR_MODEL_CAPABILITY'
  | 'ERR_MCP_CONFIG'
  | 'ERR_MCP_UNAVAILABLE'
  | 'ERR_MCP_LIMIT'
  | 'ERR_INTERNAL';

export class PantoError extends Error {
  readonly code: PantoErrorCode;

  constructor(code: PantoErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PantoError';
    this.code = code;
  }
}

/** True when `err` is a `PantoError` (optionally with the given code). Works across realms/duplicate copies. */
export function isPantoError(err: unknown, code?: PantoErrorCode): err is PantoError {
  if (typeof err !== 'object' || err === null) return false;
  const c = (err as { code?: unknown }).code;
  if (typeof c !== 'string' || !(err instanceof Error)) return false;
  return code === undefined ? c.startsWith('ERR_') : c === code;
}
