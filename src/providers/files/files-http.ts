/**
 * The HTTP exchange every Files API client makes: one request with a deadline, redirects refused, the answer read
 * whole but bounded (`FILES_RESPONSE_MAX_BYTES`) and parsed as a JSON object. A failure is a `ProviderError` (api
 * `<surface> files`) with the provider's own message and `retryable` set as the transport sets it (network failures,
 * timeouts, 408/409/429/5xx); a garbage, oversized or endless answer is a non-retryable one. Never hangs: the deadline
 * covers the headers and the body.
 */

import { isPantoError, PantoError } from '../../errors.js';
import { timerMs } from '../../timer-ms.js';
import { extractProviderMessage, isRetryableStatus, ProviderError } from '../transport/provider-error.js';

/** The most of a Files API answer read: a file object is a few hundred bytes; more is not a Files API answering. */
export const FILES_RESPONSE_MAX_BYTES = 64 * 1024;

export interface FilesExchange {
  /** `anthropic-messages files`, ... (the `api` of the errors). */
  api: string;
  fetch: typeof fetch;
  /** Per-request deadline in ms. */
  timeoutMs: number;
}

export interface FilesRequest {
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  body?: RequestInit['body'];
  signal?: AbortSignal | undefined;
}

export interface FilesAnswer {
  status: number;
  headers: Headers;
  /** The body parsed as JSON (`undefined` for an empty body). */
  json: unknown;
}

/**
 * Make one request and read its answer. A non-2xx status throws (`ProviderError`, the provider's message), except
 * the statuses in `accept` (e.g. 404 for a delete of a file already gone), which are returned.
 * @throws ProviderError; PantoError `ERR_ABORTED` when `signal` fires.
 */
export async function filesRequest(
  ex: FilesExchange,
  req: FilesRequest,
  accept: readonly number[] = [],
): Promise<FilesAnswer> {
  const deadline = new AbortController();
  const timer = setTimeout(
    () =>
      deadline.abort(
        new ProviderError({
          api: ex.api,
          providerMessage: `${req.method} ${shownUrl(req.url)} timed out after ${ex.timeoutMs} ms`,
          retryable: true,
        }),
      ),
    timerMs(ex.timeoutMs),
  );
  const signal = req.signal === undefined ? deadline.signal : AbortSignal.any([req.signal, deadline.signal]);
  try {
    let response: Response;
    try {
      response = await ex.fetch(req.url, {
        method: req.method,
        headers: req.headers,
        ...(req.body === undefined ? {} : { body: req.body }),
        // A streamed body (an upload reporting its progress) needs half duplex in Node's fetch.
        ...(req.body instanceof ReadableStream ? { duplex: 'half' } : {}),
        signal,
        redirect: 'manual',
      });
    } catch (err) {
      throw failure(ex, req, err, signal);
    }
    if (response.status >= 300 && response.status < 400) {
      void response.body?.cancel().catch(() => {});
      throw new ProviderError({
        api: ex.api,
        status: response.status,
        providerMessage: `${req.method} ${shownUrl(req.url)} was redirected; redirects are not followed`,
        retryable: false,
      });
    }
    let text: string;
    try {
      text = await readBounded(response, FILES_RESPONSE_MAX_BYTES, ex.api);
    } catch (err) {
      throw failure(ex, req, err, signal);
    }
    if (response.status < 200 || response.status >= 300) {
      if (accept.includes(response.status))
        return { status: response.status, headers: response.headers, json: undefined };
      const { message, type, param } = extractProviderMessage(text);
      throw new ProviderError({
        api: ex.api,
        status: response.status,
        providerMessage: message,
        ...(type === undefined ? {} : { providerType: type }),
        ...(param === undefined ? {} : { param }),
        retryable: isRetryableStatus(response.status),
      });
    }
    if (text.trim() === '') return { status: response.status, headers: response.headers, json: undefined };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ProviderError({
        api: ex.api,
        status: response.status,
        providerMessage: `${req.method} ${shownUrl(req.url)} answered something that is not JSON: ${shownText(text)}`,
        retryable: false,
      });
    }
    return { status: response.status, headers: response.headers, json };
  } finally {
    clearTimeout(timer);
  }
}

/** The error for a request that failed before a whole answer came: the deadline's, an abort, or a network failure. */
function failure(ex: FilesExchange, req: FilesRequest, err: unknown, signal: AbortSignal): PantoError {
  if (err instanceof ProviderError) return err;
  if (req.signal?.aborted) {
    const reason: unknown = req.signal.reason;
    if (isPantoError(reason, 'ERR_ABORTED')) return reason;
    return new PantoError('ERR_ABORTED', `${req.method} ${shownUrl(req.url)} was aborted`, { cause: reason });
  }
  if (signal.aborted && signal.reason instanceof ProviderError) return signal.reason;
  const cause = (err as { cause?: unknown })?.cause;
  const detail =
    err instanceof Error
      ? `${err.message}${cause instanceof Error && cause.message ? ` (${cause.message})` : ''}`
      : String(err);
  return new ProviderError({
    api: ex.api,
    providerMessage: `${req.method} ${shownUrl(req.url)} failed: ${detail}`,
    retryable: true,
    cause: err,
  });
}

/** The body as text, at most `max` bytes; more is an error (the rest is not downloaded). */
async function readBounded(response: Response, max: number, api: string): Promise<string> {
  const body = response.body;
  if (body === null) return '';
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  let done = false;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) {
        done = true;
        break;
      }
      bytes += next.value.length;
      if (bytes > max) {
        throw new ProviderError({
          api,
          status: response.status,
          providerMessage: `the answer is larger than ${max} bytes; not a Files API answer`,
          retryable: false,
        });
      }
      chunks.push(next.value);
    }
  } finally {
    if (!done) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A URL as errors show it: no query string (an upload URL carries a session token there). */
function shownUrl(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : `${url.slice(0, q)}?…`;
}

function shownText(text: string): string {
  const t = text.trim();
  return JSON.stringify(t.length > 80 ? `${t.slice(0, 80)}…` : t);
}

/** `value` as a JSON object, or a non-retryable `ProviderError` naming what came. */
export function objectAnswer(api: string, what: string, value: unknown): Record<string, unknown> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value))
    return value as Record<string, unknown>;
  throw malformed(api, `${what}: the answer is not a JSON object`);
}

/** A non-retryable error for an answer whose fields are not what the API documents. */
export function malformed(api: string, message: string): ProviderError {
  return new ProviderError({ api, providerMessage: message, retryable: false });
}

/** Characters a file id may hold (Anthropic `file_…`, OpenAI `file-…`, Gemini `files/…`), 1–256 of them. */
const FILE_ID = /^[A-Za-z0-9._:/-]{1,256}$/;

/** `value` when it is a plausible file id, else a non-retryable error (an id goes into later requests and URLs). */
export function fileIdOf(api: string, value: unknown, what: string): string {
  if (typeof value === 'string' && FILE_ID.test(value) && !value.includes('..')) return value;
  const shown = typeof value === 'string' ? shownText(value) : typeof value;
  throw malformed(api, `${what}: the file id ${shown} is not an id (1-256 of A-Z a-z 0-9 . _ : / -)`);
}
