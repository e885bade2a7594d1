/**
 * Delays as `setTimeout` honours them. Node fires a timer longer than 2^31-1 ms after 1 ms (with a
 * `TimeoutOverflowWarning`), so every configurable delay (a provider's stall limits, an MCP session's idle time, an MCP
 * call's timeout) goes through `timerMs` before it reaches a timer: a huge limit then means "about 24.8 days", never
 * "at once".
 */

/** The longest delay `setTimeout` honours (2^31-1 ms). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** `ms` clamped to `[0, MAX_TIMER_MS]`: a delay `setTimeout` honours. */
export function timerMs(ms: number): number {
  return Math.min(Math.max(0, ms), MAX_TIMER_MS);
}
