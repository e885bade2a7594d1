/**
 * One 'abort' listener per AbortSignal, fanning out to every waiter registered on it.
 *
 * Many calls share one signal (one agent turn, many tool calls); a listener per call would pass Node's limit of 10
 * and print MaxListenersExceededWarning ("Possible EventTarget memory leak"). Contract: `watch` returns a disposer
 * that must be called exactly when the waiter stops caring (idempotent); the signal's listener is removed with the
 * last waiter, so nothing outlives the waits. A waiter is called at most once, after the signal aborts, and only if
 * it is still registered. Watching an already aborted signal registers nothing (the caller checks `aborted` first).
 */
export class AbortFanout {
  readonly #waiters = new Map<AbortSignal, { fns: Set<() => void>; listener: () => void }>();

  watch(signal: AbortSignal | undefined, onAbort: () => void): () => void {
    if (signal === undefined || signal.aborted) return () => {};
    let entry = this.#waiters.get(signal);
    if (entry === undefined) {
      const fns = new Set<() => void>();
      const listener = (): void => {
        this.#waiters.delete(signal);
        for (const fn of [...fns]) fn();
        fns.clear();
      };
      entry = { fns, listener };
      this.#waiters.set(signal, entry);
      signal.addEventListener('abort', listener, { once: true });
    }
    const e = entry;
    // A fresh function per watch, so the same callback registered twice is two waiters.
    const waiter = (): void => onAbort();
    e.fns.add(waiter);
    return () => {
      if (!e.fns.delete(waiter) || e.fns.size > 0) return;
      signal.removeEventListener('abort', e.listener);
      if (this.#waiters.get(signal) === e) this.#waiters.delete(signal);
    };
  }
}
