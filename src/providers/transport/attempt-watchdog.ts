/**
 * The clocks that end one request attempt which stopped moving, by aborting its `AbortController` with a
 * `ProviderError` reason (the transport reports that reason, not the read's generic AbortError).
 *
 * Contract:
 * - Idle (`idleMs`): no bytes at all for that long, headers included → retryable `ERR_PROVIDER`, `stall: 'idle'`,
 *   "no data for N ms; stream stalled". Pushed back by `bytes()`.
 * - Progress (`progressMs`): bytes keep arriving but none of them is part of the response — only keep-alives (SSE
 *   comments such as `: ping` / `: OPENROUTER PROCESSING`, Anthropic `ping` events, Responses `keepalive` events)
 *   — for that long → non-retryable `ERR_PROVIDER`, `stall: 'keep-alives-only'`, "no content for N ms, only
 *   keep-alives". Pushed back by `progress()`. Not retryable: the connection was alive and the server chose not to
 *   answer, so a new attempt most likely waits as long again (and a model that was truly thinking would start over).
 * - Both start when the attempt starts; 0 (or a negative or NaN) disables a clock; a value longer than a timer can
 *   hold (Infinity, 1e12) waits the longest a timer can (~24.8 days) instead of firing at once as Node would.
 * - `settle()` stops both (the response is complete and the transport only waits a bounded time for the body's end),
 *   `dispose()` too (the attempt is over).
 * - One timer per clock, pushed back with `refresh()`: no timer churn per chunk.
 */

import { timerMs } from '../../timer-ms.js';
import { ProviderError } from './provider-error.js';

export class AttemptWatchdog {
  readonly #ctl: AbortController;
  readonly #api: string;
  readonly #idleMs: number;
  readonly #progressMs: number;
  #idle: NodeJS.Timeout | undefined;
  #progress: NodeJS.Timeout | undefined;
  /** Bytes arrived since the last progress (so the message can say they were keep-alives). */
  #keepAlives = false;

  constructor(ctl: AbortController, api: string, idleMs: number, progressMs: number) {
    this.#ctl = ctl;
    this.#api = api;
    this.#idleMs = idleMs;
    this.#progressMs = progressMs;
    if (idleMs > 0) this.#idle = setTimeout(() => this.#stalled('idle'), timerMs(idleMs));
    if (progressMs > 0) this.#progress = setTimeout(() => this.#stalled('progress'), timerMs(progressMs));
  }

  /** Bytes arrived (any bytes, keep-alives included). */
  bytes(): void {
    this.#idle?.refresh();
    this.#keepAlives = true;
  }

  /** Part of the response arrived: an event that is not a keep-alive, or more of an unfinished one. */
  progress(): void {
    this.#progress?.refresh();
    this.#keepAlives = false;
  }

  /** The response is complete: neither clock may fail it any more. */
  settle(): void {
    this.dispose();
  }

  dispose(): void {
    clearTimeout(this.#idle);
    clearTimeout(this.#progress);
    this.#idle = undefined;
    this.#progress = undefined;
  }

  #stalled(clock: 'idle' | 'progress'): void {
    this.dispose();
    // The progress clock with no bytes at all since the last progress is an idle stall too.
    const keepAlivesOnly = clock === 'progress' && this.#keepAlives;
    const ms = clock === 'idle' ? this.#idleMs : this.#progressMs;
    this.#ctl.abort(
      new ProviderError({
        api: this.#api,
        providerMessage: keepAlivesOnly
          ? `no content for ${ms} ms, only keep-alives; stream stalled`
          : `no data for ${ms} ms; stream stalled`,
        // A connection that went silent is worth a new one; a server that answers only keep-alives is not.
        retryable: !keepAlivesOnly,
        stall: keepAlivesOnly ? 'keep-alives-only' : 'idle',
      }),
    );
  }
}
