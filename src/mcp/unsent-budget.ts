/**
 * A bound on what an HTTP server has written for clients that do not read it, per owner (a session) and in all, and
 * admission of tool calls against it.
 *
 * A client that posts calls and never reads the answers would otherwise have every result queued in the server's
 * memory (Node buffers what a socket cannot take). Two measures per owner, over its open responses (`track`):
 * - unsent: `writableLength`, what Node still holds for them (memory of this process);
 * - in flight: the bytes written to responses that have not finished (what the client has yet to take, the kernel's
 *   socket buffers included, which hold a few MB before Node starts to).
 * `wrote(owner, res, bytes)` after each write, and every `drain`, recount.
 *
 * - `admit(owner, signal)` resolves when a call of `owner` may start: fewer than `maxRunning` of its calls and fewer
 *   than `maxRunningTotal` calls in all admitted and not released, its bytes in flight within `perOwner`, and the total
 *   unsent within `total` — past it, an owner with nothing in flight still runs one call at a time (a client that
 *   reads is served while others are stalled). Waiting calls of owners with nothing in flight start first, then the others, each in arrival order (one
 *   that cannot start does not hold up another's). A waiting call whose `signal` aborts rejects with the signal's
 *   reason. The returned function releases the slot (once).
 * - An owner is stalled while its unsent bytes pass `perOwner`, or while the total unsent passes `total` and it has
 *   unsent bytes of its own, or while its bytes in flight pass `perOwner` and a call of it waits. Stalled for
 *   `drainTimeoutMs` without a break, it is reported to `onStalled` (the server ends that session: its calls are
 *   cancelled and its sockets closed, which frees what they held).
 * So a client that does not read gets at most about `perOwner` plus `maxRunning` results written for it, and what
 * this process holds for all of them is about `total` plus the results of the calls admitted before it was passed.
 */

import type { ServerResponse } from 'node:http';
import { timerMs } from '../timer-ms.js';

export interface UnsentBudgetOptions {
  perOwner: number;
  total: number;
  drainTimeoutMs: number;
  maxRunning: number;
  maxRunningTotal: number;
  onStalled: (owner: object) => void;
}

interface Waiter {
  owner: object;
  resolve: (release: () => void) => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal;
  onAbort: () => void;
}

interface OwnerState {
  /** Open responses and the bytes written to each. */
  responses: Map<ServerResponse, number>;
  unsent: number;
  inFlight: number;
  running: number;
  timer: ReturnType<typeof setTimeout> | undefined;
}

export class UnsentBudget {
  readonly #opts: UnsentBudgetOptions;
  readonly #owners = new Map<object, OwnerState>();
  #total = 0;
  #running = 0;
  /** Calls waiting to start, in arrival order. */
  #waiters: Waiter[] = [];

  constructor(options: UnsentBudgetOptions) {
    this.#opts = options;
  }

  /** Unsent bytes of every owner together. */
  get total(): number {
    return this.#total;
  }

  /** Unsent bytes of `owner`. */
  unsent(owner: object): number {
    return this.#owners.get(owner)?.unsent ?? 0;
  }

  /** Bytes written to `owner`'s open responses. */
  inFlight(owner: object): number {
    return this.#owners.get(owner)?.inFlight ?? 0;
  }

  /** Whether `owner` is stalled (see the module contract). */
  stalled(owner: object): boolean {
    const st = this.#owners.get(owner);
    return st !== undefined && this.#stalled(owner, st);
  }

  /** Count `res` towards `owner` until it closes. */
  track(owner: object, res: ServerResponse): void {
    const st = this.#state(owner);
    st.responses.set(res, 0);
    const recount = () => this.#recount(owner);
    res.on('drain', recount);
    res.once('close', () => {
      res.off('drain', recount);
      st.inFlight -= st.responses.get(res) ?? 0;
      st.responses.delete(res);
      this.#recount(owner);
    });
  }

  /** `bytes` were written to `res` of `owner`. */
  wrote(owner: object, res: ServerResponse, bytes: number): void {
    const st = this.#owners.get(owner);
    const before = st?.responses.get(res);
    if (st === undefined || before === undefined) return;
    st.responses.set(res, before + bytes);
    st.inFlight += bytes;
    this.#recount(owner);
  }

  /** Wait until a call of `owner` may start; see the module contract. */
  admit(owner: object, signal: AbortSignal): Promise<() => void> {
    const st = this.#state(owner);
    if (signal.aborted) return Promise.reject(signal.reason);
    if (!this.#waiters.some((w) => w.owner === owner) && this.#admissible(st)) {
      return Promise.resolve(this.#take(owner, st));
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        owner,
        resolve,
        reject,
        signal,
        onAbort: () => {
          this.#waiters = this.#waiters.filter((w) => w !== waiter);
          reject(signal.reason);
          this.#settle(owner, st);
        },
      };
      signal.addEventListener('abort', waiter.onAbort, { once: true });
      this.#waiters.push(waiter);
      this.#settle(owner, st);
    });
  }

  /** Stop counting `owner`: its timer stops, its waiting calls reject with `reason`. */
  forget(owner: object, reason: unknown): void {
    const st = this.#owners.get(owner);
    if (st === undefined) return;
    this.#owners.delete(owner);
    if (st.timer !== undefined) clearTimeout(st.timer);
    this.#total -= st.unsent;
    this.#running -= st.running;
    st.running = 0;
    const mine = this.#waiters.filter((w) => w.owner === owner);
    this.#waiters = this.#waiters.filter((w) => w.owner !== owner);
    for (const w of mine) {
      w.signal.removeEventListener('abort', w.onAbort);
      w.reject(reason);
    }
    for (const [o, s] of this.#owners) this.#settle(o, s);
    this.#admitWaiting();
  }

  #state(owner: object): OwnerState {
    let st = this.#owners.get(owner);
    if (st === undefined) {
      st = { responses: new Map(), unsent: 0, inFlight: 0, running: 0, timer: undefined };
      this.#owners.set(owner, st);
    }
    return st;
  }

  /** Recount `owner`'s unsent bytes; settle timers and admit what may start. */
  #recount(owner: object): void {
    const st = this.#owners.get(owner);
    if (st === undefined) return;
    let unsent = 0;
    for (const res of st.responses.keys()) unsent += res.writableLength;
    const wasOver = this.#total > this.#opts.total;
    this.#total += unsent - st.unsent;
    st.unsent = unsent;
    if (wasOver !== this.#total > this.#opts.total) {
      for (const [o, s] of this.#owners) this.#settle(o, s);
    } else this.#settle(owner, st);
    this.#admitWaiting();
  }

  #stalled(owner: object, st: OwnerState): boolean {
    return (
      st.unsent > this.#opts.perOwner ||
      (this.#total > this.#opts.total && st.unsent > 0) ||
      (st.inFlight > this.#opts.perOwner && this.#waiters.some((w) => w.owner === owner))
    );
  }

  #admissible(st: OwnerState): boolean {
    if (this.#running >= this.#opts.maxRunningTotal || st.inFlight > this.#opts.perOwner) return false;
    if (this.#total <= this.#opts.total) return st.running < this.#opts.maxRunning;
    // Past the total: an owner with nothing in flight (it read all it was sent) still runs one call at a time.
    return st.inFlight === 0 && st.running === 0;
  }

  #take(owner: object, st: OwnerState): () => void {
    st.running++;
    this.#running++;
    let released = false;
    return () => {
      if (released || this.#owners.get(owner) !== st) return;
      released = true;
      st.running--;
      this.#running--;
      this.#admitWaiting();
    };
  }

  /** Start every waiting call that may start now: owners with nothing in flight first, each group in arrival order. */
  #admitWaiting(): void {
    if (this.#waiters.length === 0) return;
    const admitted = new Set<Waiter>();
    for (const readersOnly of [true, false]) {
      for (const w of this.#waiters) {
        const st = this.#owners.get(w.owner);
        if (st === undefined || admitted.has(w) || (readersOnly && st.inFlight > 0)) continue;
        if (!this.#admissible(st)) continue;
        admitted.add(w);
        w.signal.removeEventListener('abort', w.onAbort);
        w.resolve(this.#take(w.owner, st));
      }
    }
    if (admitted.size === 0) return;
    this.#waiters = this.#waiters.filter((w) => !admitted.has(w));
    for (const w of admitted) {
      const st = this.#owners.get(w.owner);
      if (st !== undefined) this.#settle(w.owner, st);
    }
  }

  /** Start or stop `owner`'s drain timer. */
  #settle(owner: object, st: OwnerState): void {
    if (this.#stalled(owner, st)) {
      st.timer ??= setTimeout(() => {
        st.timer = undefined;
        if (this.#owners.get(owner) === st && this.#stalled(owner, st)) this.#opts.onStalled(owner);
      }, timerMs(this.#opts.drainTimeoutMs));
      st.timer.unref?.();
    } else if (st.timer !== undefined) {
      clearTimeout(st.timer);
      st.timer = undefined;
    }
  }
}
