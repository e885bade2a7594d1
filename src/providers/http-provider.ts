/**
 * `createProvider`: a streaming HTTP transport for one wire API, on Node's built-in `fetch`.
 *
 * Contract of `Provider.stream(request, {signal})`:
 * - Sends `request.body` (a serializer's output) with the surface's streaming flags and auth, and yields the common
 *   `StreamEvent`s (see stream-event.ts): `start`, deltas, `usage`, `retry`, then exactly one `done` or `error`.
 *   Provider failures and aborts arrive as the `error` event (with the partial message), never as a rejection.
 * - Retries (see retry-policy.ts) a 408/409/429/5xx response, a network failure, a stalled stream (no bytes for
 *   `idleTimeoutMs`), and an in-stream overload/server error — but only while nothing of the attempt reached the
 *   consumer beyond usage, so a consumer never sees text twice. Each retry is announced by a `retry` event.
 * - A stream that sends only keep-alives (SSE comments, Anthropic `ping`, Responses `keepalive`) for
 *   `progressTimeoutMs` ends with a non-retryable `ERR_PROVIDER` (`stall: 'keep-alives-only'`); see attempt-watchdog.ts.
 * - A 4xx becomes `ProviderError` (`ERR_PROVIDER`, or `ERR_PROVIDER_AUTH` for 401/403) with the provider's own
 *   message and the status.
 * - A body that goes on after the surface's last event (keep-alives, a connection left open) is cancelled
 *   `DRAIN_AFTER_END_MS` after it, and the turn ends as `done`. An OpenAI Chat stream with a finish reason but neither
 *   the usage chunk nor `[DONE]` after it, or an Anthropic stream with a `message_delta` stop reason but no
 *   `message_stop`, ends as `done` (with the usage it has) `finishGraceMs` after the finish
 *   reason (or after the latest content, for a server that sent the finish reason early and went on; keep-alives do
 *   not push it back). Redirects are not followed (a non-retryable error).
 * - Abort: the fetch and the body read stop at once; the terminal event is `error` with code `ERR_ABORTED` and the
 *   partial message (`stopReason: 'aborted'`). Stopping iteration early also cancels the request.
 */

import { PantoError } from '../errors.js';
import { timerMs } from '../timer-ms.js';
import type { StreamEvent } from './common/stream-event.js';
import { isKeepAliveEvent, mayBeKeepAlive, type SurfaceStreamParser } from './common/surface-parser.js';
import { createStreamParser } from './create-stream-parser.js';
import type { ProviderFiles } from './files/file-types.js';
import { createProviderFiles } from './files/provider-files.js';
import type { ModelApi } from './model/model-info.js';
import { AttemptWatchdog } from './transport/attempt-watchdog.js';
import { ENDPOINTS } from './transport/endpoints.js';
import {
  errorAt,
  extractProviderMessage,
  isRetryableStatus,
  ProviderError,
} from './transport/provider-error.js';
import {
  backoffDelay,
  parseRetryAfter,
  type RetryOptions,
  resolveRetryOptions,
  sleep,
} from './transport/retry-policy.js';
import { shownUrl } from './transport/shown-url.js';
import { SseParser } from './transport/sse-parser.js';

/** One request to a model: the id and the serializer's body (without streaming flags). */
export interface ProviderRequest {
  model: string;
  body: Record<string, unknown>;
  /**
   * Headers this request needs besides the provider's (a serializer's `SerializeResult.headers`, e.g. the Anthropic
   * Files API beta). An `anthropic-beta` value is joined to the provider's own, never replaces it.
   */
  headers?: Record<string, string>;
}

export interface StreamOptions {
  signal?: AbortSignal | undefined;
}

/** A model provider: something that streams a response for a request body of its wire API. */
export interface Provider {
  readonly api: ModelApi;
  /** A short name for messages and logs (e.g. `anthropic-messages @ https://api.anthropic.com`). */
  readonly name: string;
  stream(request: ProviderRequest, options?: StreamOptions): AsyncIterable<StreamEvent>;
  /**
   * The provider's Files API (upload once, reference by id), with this provider's base URL and credentials:
   * Anthropic, OpenAI (Responses: images and PDFs; Chat Completions: PDFs only, images stay inline) and Gemini.
   */
  readonly files?: ProviderFiles;
}

export interface ProviderOptions {
  api: ModelApi;
  /**
   * Base URL; the surface's public endpoint by default. With or without the API version (`…/v1`, Gemini `…/v1beta`):
   * see endpoints.ts.
   */
  baseUrl?: string;
  /**
   * API key. Default: the surface's environment variable (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `GEMINI_API_KEY` /
   * `GOOGLE_API_KEY`) from `env` — sent to a custom `baseUrl` too, as the official SDKs do; pass `env: {}` to keep it
   * home. Required for the default base URL; optional for a custom one (local servers need none).
   */
  apiKey?: string;
  /** Extra headers on every request (e.g. `anthropic-beta`, OpenRouter's `HTTP-Referer`). */
  headers?: Record<string, string>;
  /** The fetch to use. Default `globalThis.fetch`. */
  fetch?: typeof fetch;
  retry?: RetryOptions;
  /** Fail (and retry) an attempt when no bytes arrive for this long, in ms. Default 120,000; 0 disables. */
  idleTimeoutMs?: number;
  /**
   * Fail an attempt (not retried) when bytes keep arriving but none of them is content — only keep-alives: SSE
   * comments (`: ping`, OpenRouter's `: OPENROUTER PROCESSING`), Anthropic `ping` events, Responses `keepalive`
   * events — for this long, in ms. Any other event, or more of an event still arriving, is content. Default
   * 1,800,000 (30 min); 0 disables. Why so long: a model may reason for many minutes with only keep-alives on the
   * wire — Anthropic pings every ~15–30 s through extended thinking gaps of 2+ min (peers raised 120 s watchdogs to
   * 300 s for it), GPT-5.x / gpt-5-pro reasoning runs ~10 min before the first output (peers use 10 min request
   * timeouts), and an OpenRouter proxy comments the whole time its upstream thinks. 30 min is three times the longest
   * reported silent phase; lower it for models known to answer sooner.
   */
  progressTimeoutMs?: number;
  /**
   * After the finish of a turn without its last event — OpenAI Chat: a chunk with a finish reason, waiting for the
   * usage chunk or `[DONE]`; Anthropic: a `message_delta` with a stop reason, waiting for `message_stop` — how long to
   * wait before ending the turn as `done` with the usage seen so far, in ms; counted again from any later content
   * (keep-alives do not count). Default 5,000. Real servers send them right after the finish reason (back to back in
   * every recorded stream); this only bounds a server or proxy that drops them and holds the connection open. `0` does
   * not wait: the turn ends at the finish reason with only what had already arrived (a usage chunk in the same read is
   * kept, a later one is lost); a negative value or NaN counts as 0. Values over 2^31-1 ms wait that long (a timer's
   * maximum).
   */
  finishGraceMs?: number;
  /**
   * Deadline of each Files API exchange (`provider.files`: an upload with its bytes, a delete), in ms. An upload that
   * misses it fails, and the agent sends that part inline. Default 120,000.
   */
  filesTimeoutMs?: number;
  /** OpenAI Chat: ask for a usage chunk (`stream_options.include_usage`). Default true. */
  includeUsage?: boolean;
  /** Where API keys are read from. Default `process.env`. */
  env?: Record<string, string | undefined>;
}

/** Create a provider. Throws `ERR_PROVIDER_AUTH` when the default endpoint is used without any API key. */
export function createProvider(options: ProviderOptions): Provider {
  const endpoint = ENDPOINTS[options.api];
  if (endpoint === undefined) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      `createProvider: unknown api '${String(options.api)}'; expected one of ${Object.keys(ENDPOINTS).join(', ')}`,
    );
  }
  const env = options.env ?? process.env;
  const apiKey =
    options.apiKey ?? endpoint.keyEnv.map((k) => env[k]).find((v) => v !== undefined && v !== '');
  const baseUrl = options.baseUrl ?? endpoint.defaultBaseUrl;
  if (apiKey === undefined && options.baseUrl === undefined) {
    throw new PantoError(
      'ERR_PROVIDER_AUTH',
      `createProvider(${options.api}): no API key; pass apiKey or set ${endpoint.keyEnv.join(' or ')}`,
    );
  }
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const retry = resolveRetryOptions(options.retry);
  const idleTimeoutMs = options.idleTimeoutMs ?? 120_000;
  const progressTimeoutMs = options.progressTimeoutMs ?? PROGRESS_TIMEOUT_MS;
  const grace = options.finishGraceMs ?? FINISH_GRACE_MS;
  const finishGraceMs = Number.isNaN(grace) ? 0 : Math.max(0, grace);
  const includeUsage = options.includeUsage ?? true;
  // How long the body may go on after the surface's last event (before the idle timer could turn it into a stall).
  const drainMs = idleTimeoutMs > 0 ? Math.min(DRAIN_AFTER_END_MS, idleTimeoutMs / 2) : DRAIN_AFTER_END_MS;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'text/event-stream',
    ...endpoint.headers,
    ...(apiKey === undefined ? {} : endpoint.authHeaders(apiKey)),
    ...options.headers,
  };
  const api = options.api;
  const name = `${api} @ ${shownUrl(baseUrl, apiKey)}`;
  const files = createProviderFiles({
    api,
    baseUrl,
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(options.headers === undefined ? {} : { headers: options.headers }),
    ...(options.filesTimeoutMs === undefined ? {} : { timeoutMs: options.filesTimeoutMs }),
    fetch: fetchImpl,
  });

  async function* stream(
    request: ProviderRequest,
    streamOptions?: StreamOptions,
  ): AsyncGenerator<StreamEvent> {
    const signal = streamOptions?.signal;
    const url = endpoint.url(baseUrl, request.model);
    const requestHeaders =
      request.headers === undefined ? headers : withRequestHeaders(headers, request.headers);
    let payload: string;
    try {
      payload = JSON.stringify(endpoint.streamingBody(request.body, request.model, { includeUsage }));
    } catch (err) {
      // A BigInt, a cycle, or nesting deeper than JSON.stringify's stack: the request cannot be sent at all.
      const error = new PantoError(
        'ERR_INVALID_ARGUMENT',
        `${api}: the request body cannot be serialized as JSON: ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
      yield {
        type: 'error',
        error,
        message: createStreamParser(api, () => {}).partial('error', error.message),
      };
      return;
    }
    let started = false;
    for (let attempt = 1; ; attempt++) {
      const queue: StreamEvent[] = [];
      const parser = createStreamParser(api, (e) => queue.push(e));
      let failure: unknown;
      const attemptCtl = new AbortController();
      const onAbort = () => attemptCtl.abort(signal?.reason);
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
      const watchdog = new AttemptWatchdog(attemptCtl, api, idleTimeoutMs, progressTimeoutMs);
      let completed = false;
      try {
        const response = await send(url, payload, requestHeaders, attemptCtl.signal);
        if (!started) {
          started = true;
          yield { type: 'start' };
        }
        yield* readEvents(api, response, parser, queue, attemptCtl.signal, watchdog, {
          drainMs,
          graceMs: finishGraceMs,
        });
        if (!parser.complete) {
          throw new ProviderError({
            api,
            providerMessage: 'the stream ended before the response was complete',
            retryable: true,
          });
        }
        const message = parser.result();
        // Closing open blocks may emit final events (e.g. toolcall_end).
        yield* queue.splice(0);
        completed = true;
        yield { type: 'done', message };
        return;
      } catch (err) {
        // A stall aborts the attempt with a ProviderError reason; the read then rejects with a generic AbortError.
        const reason: unknown = attemptCtl.signal.reason;
        failure = attemptCtl.signal.aborted && reason instanceof ProviderError ? reason : err;
      } finally {
        watchdog.dispose();
        signal?.removeEventListener('abort', onAbort);
        // Release the connection unless the body was read to its end (abort() without a reason would build a
        // DOMException on every request).
        if (!completed && !attemptCtl.signal.aborted) attemptCtl.abort(CANCELLED);
      }
      if (signal?.aborted) {
        yield abortedEvent(parser, signal);
        return;
      }
      const error = errorAt(toProviderError(api, failure), shownUrl(url, apiKey));
      const retryAfter = error.retryAfterMs;
      const canRetry =
        error.retryable &&
        attempt < retry.maxAttempts &&
        !parser.builder.emittedContent &&
        (retryAfter === undefined || retryAfter <= retry.maxRetryAfterMs);
      if (!canRetry) {
        const final = tooLongToWait(error, retryAfter, retry.maxRetryAfterMs, attempt, retry.maxAttempts);
        yield { type: 'error', error: final, message: parser.partial('error', final.message) };
        return;
      }
      const delayMs = retryAfter ?? backoffDelay(attempt, retry);
      yield { type: 'retry', attempt, delayMs, error };
      try {
        await sleep(delayMs, signal);
      } catch {
        yield abortedEvent(parser, signal);
        return;
      }
    }
  }

  async function send(
    url: string,
    payload: string,
    headers: Record<string, string>,
    signal: AbortSignal,
  ): Promise<Response> {
    let response: Response;
    try {
      // Redirects are not followed: fetch would re-send the body, and every auth header but `authorization`, to
      // whatever origin the Location names (see `redirectError`).
      response = await fetchImpl(url, { method: 'POST', headers, body: payload, signal, redirect: 'manual' });
    } catch (err) {
      if (signal.aborted) throw signal.reason ?? err;
      throw new ProviderError({
        api,
        // fetch's own message may quote the URL as given (a password in it) or the key: both shown masked.
        providerMessage: shownUrl(
          `request failed: ${networkMessage(err).split(url).join(shownUrl(url))}`,
          apiKey,
        ),
        retryable: true,
        cause: err,
      });
    }
    if (response.status >= 300 && response.status < 400) throw redirectError(api, url, response);
    if (!response.ok) throw await errorFromResponse(response);
    const type = (response.headers.get('content-type') ?? '').toLowerCase();
    if (type.includes('text/html')) {
      // A captive portal, a proxy's login page or a web server's error page, sent with 200.
      const text = await readBodyText(response);
      throw new ProviderError({
        api,
        status: response.status,
        providerMessage: `expected an event stream, got ${type}: ${extractProviderMessage(text).message}`,
        retryable: false,
      });
    }
    if (type.includes('application/json')) {
      // A server that ignored `stream: true` or answered an error with 200.
      const text = await readBodyText(response);
      const { message, type: kind } = extractProviderMessage(text);
      throw new ProviderError({
        api,
        status: response.status,
        providerMessage: `expected an event stream, got JSON: ${message}`,
        ...(kind === undefined ? {} : { providerType: kind }),
        retryable: false,
      });
    }
    if (response.body === null) {
      throw new ProviderError({
        api,
        status: response.status,
        providerMessage: 'empty response body',
        retryable: true,
      });
    }
    return response;
  }

  async function errorFromResponse(response: Response): Promise<ProviderError> {
    const text = await readBodyText(response).catch(
      (err: unknown) => `(could not read the error body: ${networkMessage(err)})`,
    );
    const { message, type, param } = extractProviderMessage(text);
    const retryAfterMs = parseRetryAfter(response.headers);
    const requestId = response.headers.get('request-id') ?? response.headers.get('x-request-id') ?? undefined;
    return new ProviderError({
      api,
      status: response.status,
      providerMessage: message,
      ...(type === undefined ? {} : { providerType: type }),
      ...(param === undefined ? {} : { param }),
      retryable: isRetryableStatus(response.status),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      ...(requestId === undefined ? {} : { requestId }),
    });
  }

  return files === undefined ? { api, name, stream } : { api, name, stream, files };
}

/** The provider's headers with a request's added; `anthropic-beta` values are joined (a comma list), not replaced. */
function withRequestHeaders(
  base: Record<string, string>,
  extra: Record<string, string>,
): Record<string, string> {
  const out = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    const k = key.toLowerCase();
    const existing = Object.keys(out).find((h) => h.toLowerCase() === k);
    if (k === 'anthropic-beta' && existing !== undefined) {
      const have = (out[existing] as string).split(',').map((v) => v.trim());
      const add = value
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '' && !have.includes(v));
      out[existing] = [...have.filter((v) => v !== ''), ...add].join(',');
    } else {
      if (existing !== undefined) delete out[existing];
      out[key] = value;
    }
  }
  return out;
}

/** The most of a non-stream body (an error page, a JSON error) read to quote it; the rest is not downloaded. */
export const ERROR_BODY_MAX_BYTES = 64 * 1024;

/**
 * The first `maxBytes` of a response body as text (a cut multi-byte character becomes U+FFFD); the rest of the body
 * is cancelled, so an endless or huge error body neither hangs the request nor fills memory.
 */
async function readBodyText(response: Response, maxBytes = ERROR_BODY_MAX_BYTES): Promise<string> {
  const body = response.body;
  if (body === null) return '';
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  let done = false;
  try {
    while (bytes < maxBytes) {
      const next = await reader.read();
      if (next.done) {
        done = true;
        break;
      }
      const piece = next.value.subarray(0, maxBytes - bytes);
      bytes += piece.length;
      text += decoder.decode(piece, { stream: true });
    }
    return text + decoder.decode();
  } finally {
    if (!done) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

/**
 * A 3xx answer: not followed (a redirect to another origin would hand it the API key, since fetch strips only
 * `authorization`, not `x-api-key` / `x-goog-api-key`; a loop would burn requests), reported with the target so a
 * user can fix the base URL. Not retryable.
 */
function redirectError(api: string, url: string, response: Response): ProviderError {
  void response.body?.cancel().catch(() => {});
  const location = response.headers.get('location');
  let target = '(no location)';
  if (location !== null) {
    try {
      target = shownUrl(new URL(location, url).href);
    } catch {
      target = shownUrl(location.slice(0, 500));
    }
  }
  return new ProviderError({
    api,
    status: response.status,
    providerMessage: `redirected to ${target}; redirects are not followed (set baseUrl to the final address)`,
    retryable: false,
  });
}

/**
 * After the surface's last event (`parser.ended`), how long to wait for the body to end before cancelling it and
 * finishing the turn: a well-behaved server closes at once (the connection is then reused); one that keeps the
 * connection open or sends keep-alives after the end must not hang a finished response.
 */
export const DRAIN_AFTER_END_MS = 1000;

/** Default `progressTimeoutMs` (30 min; the evidence is on `ProviderOptions.progressTimeoutMs`). */
export const PROGRESS_TIMEOUT_MS = 30 * 60 * 1000;

/** Default `finishGraceMs`. */
export const FINISH_GRACE_MS = 5000;

/** Abort reason for an attempt the consumer stopped reading. */
const CANCELLED = new PantoError('ERR_ABORTED', 'the consumer stopped reading the stream');

async function* readEvents(
  api: string,
  response: Response,
  parser: SurfaceStreamParser,
  queue: StreamEvent[],
  signal: AbortSignal,
  watchdog: AttemptWatchdog,
  waits: { drainMs: number; graceMs: number },
): AsyncGenerator<StreamEvent> {
  let progressed = false;
  const sse = new SseParser(
    (e) => {
      if (!isKeepAliveEvent(e)) progressed = true;
      parser.accept(e);
    },
    { api },
  );
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let finished = false;
  let pending = 0;
  /** When the body must have ended: once the surface's last event was seen, or its finish (`complete`) only. */
  let deadline: number | undefined;
  /** Which wait `deadline` is: after the last event, or the grace after a finish (pushed back by content). */
  let after: 'drain' | 'grace' | undefined;
  try {
    for (;;) {
      if (signal.aborted) throw signal.reason;
      let next: Awaited<ReturnType<typeof reader.read>> | undefined;
      try {
        next = deadline === undefined ? await reader.read() : await readBefore(reader, deadline);
      } catch (err) {
        // The connection broke after the surface's finish (Anthropic's stop reason before `message_stop`, a Chat
        // finish reason before its usage chunk): the answer is whole, and retrying it would pay for it twice.
        if (parser.complete && !signal.aborted) return;
        throw err;
      }
      // The body went on past the last event (or the grace after the finish): leave it (the finally cancels it); the
      // message is complete.
      if (next === undefined) return;
      const { done, value } = next;
      try {
        if (done) {
          sse.end();
          finished = true;
        } else {
          watchdog.bytes();
          progressed = false;
          sse.push(value);
          // More of an event still arriving (a long line) is progress; a keep-alive comment is not, nor the first part
          // of a keep-alive event cut across reads (judged by the event's head, not by the read).
          const now = sse.pendingChars;
          if (now > pending && !mayBeKeepAlive(sse.pendingHead())) progressed = true;
          pending = now;
          if (progressed) watchdog.progress();
        }
      } catch (err) {
        // The bytes arrived; what they say is wrong. Not a network failure: retrying would get the same bytes.
        throw malformedStream(api, err);
      }
      for (let i = 0; i < queue.length; i++) yield queue[i] as StreamEvent;
      queue.length = 0;
      if (finished) return;
      if (parser.ended) {
        if (after !== 'drain') {
          after = 'drain';
          watchdog.settle();
          deadline = Date.now() + waits.drainMs;
        }
      } else if (parser.complete && (after !== 'grace' || progressed)) {
        // A finish reason without the last event: wait a grace from the latest content (a server that sent the
        // finish reason early goes on), not from keep-alives.
        after = 'grace';
        watchdog.settle();
        deadline = Date.now() + waits.graceMs;
      }
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

/** The next read, or undefined when `deadline` (epoch ms) passes first. */
async function readBefore(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  deadline: number,
): Promise<Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>> | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, timerMs(deadline - Date.now()), undefined);
  });
  try {
    return await Promise.race([reader.read(), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A failure while reading the events of a response: a `ProviderError` as it is (an error event, an over-long line),
 * anything else (a parser that met a value it cannot handle) as a non-retryable `ProviderError` naming it.
 */
function malformedStream(api: string, err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  return new ProviderError({
    api,
    providerMessage: `malformed stream: ${err instanceof Error ? err.message : String(err)}`,
    retryable: false,
    cause: err,
  });
}

function abortedEvent(parser: SurfaceStreamParser, signal: AbortSignal | undefined): StreamEvent {
  const reason: unknown = signal?.reason;
  const why = reason instanceof Error && reason.name !== 'AbortError' ? `: ${reason.message}` : '';
  const error = new PantoError(
    'ERR_ABORTED',
    `request aborted${why}`,
    reason === undefined ? undefined : { cause: reason },
  );
  return { type: 'error', error, message: parser.partial('aborted') };
}

/**
 * The error to report when a retryable failure asked for a longer wait than `maxRetryAfterMs`: the same error with a
 * note saying how long the provider asked for and what the limit is (a host would otherwise see an instant failure).
 */
function tooLongToWait(
  error: ProviderError,
  retryAfter: number | undefined,
  maxRetryAfterMs: number,
  attempt: number,
  maxAttempts: number,
): ProviderError {
  if (
    !error.retryable ||
    retryAfter === undefined ||
    retryAfter <= maxRetryAfterMs ||
    attempt >= maxAttempts
  ) {
    return error;
  }
  const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
  return new ProviderError({
    ...error.details(),
    retryable: true,
    retryAfterMs: retryAfter,
    note: `the provider asked to retry after ${seconds(retryAfter)}, longer than the longest wait allowed (retry.maxRetryAfterMs = ${seconds(maxRetryAfterMs)}); not retried`,
  });
}

function toProviderError(api: string, err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  return new ProviderError({
    api,
    providerMessage: `reading the response failed: ${networkMessage(err)}`,
    retryable: true,
    cause: err,
  });
}

function networkMessage(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  if (cause instanceof Error && cause.message) return `${err.message} (${cause.message})`;
  return err.message;
}
