/**
 * Errors from a model provider, carrying the provider's own words.
 *
 * - HTTP 401/403 → `ERR_PROVIDER_AUTH`; any other failure → `ERR_PROVIDER`. `status` is the HTTP status (absent for a
 *   network failure or an error event inside a 200 stream).
 * - `providerMessage` is the message the provider wrote (`error.message` in every surface's error body), never
 *   reworded; `providerType` is its machine-readable kind (`overloaded_error`, `rate_limit_exceeded`,
 *   `INVALID_ARGUMENT`, ...), when it gave one.
 * - `retryable` says whether the transport may retry the same request (429, 5xx, overloaded, network failure).
 * - `stall` is set when the transport itself ended the attempt: `'idle'` (no bytes for `idleTimeoutMs`) or
 *   `'keep-alives-only'` (bytes, but no content, for `progressTimeoutMs`); a stable value to branch on.
 * - `url` is the URL the failed request went to, as messages show it (shown-url.ts: never a credential); the message
 *   ends with `[POST <url>]` when it is known.
 */

import { PantoError } from '../../errors.js';

/** How a stream stopped moving: no bytes at all, or only keep-alives (comments, `ping` / `keepalive` events). */
export type ProviderStall = 'idle' | 'keep-alives-only';

export interface ProviderErrorDetails {
  /** The wire API that failed, e.g. `anthropic-messages`. */
  api: string;
  status?: number;
  providerMessage: string;
  providerType?: string;
  /** The request field the provider blamed (OpenAI `error.param`, e.g. `messages.[3].content.[1].image_url`). */
  param?: string;
  retryable: boolean;
  /** Delay the provider asked for (retry-after / retry-after-ms), in ms. */
  retryAfterMs?: number;
  /** The provider's request id header, for support tickets. */
  requestId?: string;
  /** Why the transport ended a stream that stopped moving (see `ProviderStall`); absent for any other failure. */
  stall?: ProviderStall;
  /** What the transport adds to the message (e.g. why it did not retry); never part of `providerMessage`. */
  note?: string;
  /** The URL requested, credentials masked (see `shownUrl`). */
  url?: string;
  cause?: unknown;
}

export class ProviderError extends PantoError {
  readonly api: string;
  readonly status: number | undefined;
  readonly providerMessage: string;
  readonly providerType: string | undefined;
  readonly param: string | undefined;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  readonly requestId: string | undefined;
  readonly stall: ProviderStall | undefined;
  readonly note: string | undefined;
  readonly url: string | undefined;

  constructor(details: ProviderErrorDetails) {
    const auth = details.status === 401 || details.status === 403;
    const where = details.status === undefined ? details.api : `${details.api} HTTP ${details.status}`;
    const kind = details.providerType ? ` (${details.providerType})` : '';
    const note = details.note ? ` (${details.note})` : '';
    const url = details.url ? ` [POST ${details.url}]` : '';
    super(
      auth ? 'ERR_PROVIDER_AUTH' : 'ERR_PROVIDER',
      `${where}${kind}: ${details.providerMessage}${note}${url}`,
      details.cause === undefined ? undefined : { cause: details.cause },
    );
    this.name = 'ProviderError';
    this.api = details.api;
    this.status = details.status;
    this.providerMessage = details.providerMessage;
    this.providerType = details.providerType;
    this.param = details.param;
    this.retryable = details.retryable;
    this.retryAfterMs = details.retryAfterMs;
    this.requestId = details.requestId;
    this.stall = details.stall;
    this.note = details.note;
    this.url = details.url;
  }

  /** The details this error was made from (to make a changed copy). */
  details(): ProviderErrorDetails {
    const d: ProviderErrorDetails = {
      api: this.api,
      providerMessage: this.providerMessage,
      retryable: this.retryable,
    };
    if (this.status !== undefined) d.status = this.status;
    if (this.providerType !== undefined) d.providerType = this.providerType;
    if (this.param !== undefined) d.param = this.param;
    if (this.retryAfterMs !== undefined) d.retryAfterMs = this.retryAfterMs;
    if (this.requestId !== undefined) d.requestId = this.requestId;
    if (this.stall !== undefined) d.stall = this.stall;
    if (this.note !== undefined) d.note = this.note;
    if (this.url !== undefined) d.url = this.url;
    if (this.cause !== undefined) d.cause = this.cause;
    return d;
  }
}

/** `error` naming the URL its request went to (itself when it already names one). */
export function errorAt(error: ProviderError, url: string): ProviderError {
  return error.url !== undefined ? error : new ProviderError({ ...error.details(), url });
}

/** HTTP statuses worth retrying: timeouts, conflicts, rate limits, server errors, Anthropic's 529 overloaded. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * Pull the message and kind out of an error body. Every surface nests it under `error`: Anthropic
 * `{type:'error', error:{type, message}}`, OpenAI `{error:{message, type, code, param}}`, Gemini
 * `{error:{code, message, status}}` (sometimes wrapped in a one-element array).
 */
export function extractProviderMessage(bodyText: string): { message: string; type?: string; param?: string } {
  const trimmed = bodyText.trim();
  if (trimmed.length === 0) return { message: '(empty response body)' };
  let json: unknown;
  try {
    json = JSON.parse(trimmed);
  } catch {
    return { message: trimmed.length > 2000 ? `${trimmed.slice(0, 2000)}…` : trimmed };
  }
  if (Array.isArray(json)) json = json[0];
  const root = json as Record<string, unknown> | null;
  const err = (root && typeof root.error === 'object' && root.error !== null ? root.error : root) as Record<
    string,
    unknown
  > | null;
  const message =
    typeof err?.message === 'string'
      ? err.message
      : typeof root?.message === 'string'
        ? root.message
        : typeof root?.error === 'string'
          ? root.error
          : trimmed;
  const type =
    typeof err?.type === 'string'
      ? err.type
      : typeof err?.status === 'string'
        ? err.status
        : typeof err?.code === 'string'
          ? err.code
          : undefined;
  const out: { message: string; type?: string; param?: string } = { message };
  if (type !== undefined) out.type = type;
  if (typeof err?.param === 'string' && err.param !== '') out.param = err.param;
  return out;
}
