/**
 * When and how long to wait before retrying a provider request.
 *
 * Contract: at most `maxAttempts` requests in total; the wait before attempt n+1 is the provider's `retry-after-ms` /
 * `retry-after` (seconds or HTTP date) when present, otherwise exponential backoff with full jitter
 * (`initialDelayMs * 2^(n-1)`, capped at `maxDelayMs`). A provider that asks for longer than `maxRetryAfterMs` is not
 * waited for: the error surfaces at once, so a host is never stuck behind a long quota reset.
 */

import { timerMs } from '../../timer-ms.js';

export interface RetryOptions {
  /** Total attempts including the first. Default 4. */
  maxAttempts?: number;
  /** First backoff step in ms. Default 500. */
  initialDelayMs?: number;
  /** Cap on a computed backoff step in ms. Default 16,000. */
  maxDelayMs?: number;
  /** Longest provider-requested wait honoured, in ms. Default 60,000. */
  maxRetryAfterMs?: number;
}

export interface ResolvedRetryOptions {
  maxAttempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterMs: number;
}

export function resolveRetryOptions(options: RetryOptions | undefined): ResolvedRetryOptions {
  return {
    maxAttempts: Math.max(1, Math.floor(options?.maxAttempts ?? 4)),
    initialDelayMs: Math.max(0, options?.initialDelayMs ?? 500),
    maxDelayMs: Math.max(0, options?.maxDelayMs ?? 16_000),
    maxRetryAfterMs: Math.max(0, options?.maxRetryAfterMs ?? 60_000),
  };
}

/**
 * The wait a response asks for, in ms, or undefined. Reads `retry-after-ms` (OpenAI) first, then `retry-after` as
 * delta-seconds (fractions allowed) or an HTTP date relative to `now`.
 */
export function parseRetryAfter(headers: Headers, now: number = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const v = Number(ms);
    if (Number.isFinite(v) && v >= 0) return v;
  }
  const ra = headers.get('retry-after');
  if (ra === null || ra.trim() === '') return undefined;
  const seconds = Number(ra);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(ra);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Backoff for the wait after failed attempt `attempt` (1-based), with full jitter; `random` is injectable. */
export function backoffDelay(
  attempt: number,
  options: ResolvedRetryOptions,
  random: () => number = Math.random,
): number {
  const step = Math.min(options.maxDelayMs, options.initialDelayMs * 2 ** Math.max(0, attempt - 1));
  // Half fixed, half jitter: never zero, never in lockstep with other clients.
  return Math.round(step / 2 + (random() * step) / 2);
}

/**
 * Resolve after `ms`, or reject with the signal's reason as soon as it aborts. A wait longer than a timer can hold
 * (a provider's retry-after of 1e12 s with `maxRetryAfterMs: Infinity`) waits in steps instead of firing at once.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const end = Date.now() + ms;
    const step = (): NodeJS.Timeout =>
      setTimeout(
        () => {
          const left = end - Date.now();
          if (left > 0) {
            timer = step();
            return;
          }
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        timerMs(end - Date.now()),
      );
    let timer = step();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
