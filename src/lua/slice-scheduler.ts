/**
 * Fair time slicing across ALL Lua calls of a thread: at most one slice of Lua work per event-loop turn.
 *
 * A call that has used up its slice (or that is about to start, or to continue after a host call when Lua already ran
 * for a while in this turn) awaits `nextTurn()`. The waiters are released one per `setImmediate`, i.e. one per
 * event-loop iteration, in FIFO order; timers and I/O run between two slices. So 50 busy calls stall the loop for
 * one slice (`sliceMs`), not 50. Shared by every `LuaRuntime` of the thread (they share the event loop).
 */

const waiting: Array<() => void> = [];
let scheduled = false;
/** When the current burst of Lua work began. */
let burstStart = 0;
/**
 * True from the start of a burst until the event loop reaches its next check phase (a `setImmediate` queued when the
 * burst began). Lua work chained through promises never lets the loop turn, so "the loop was free" is only known
 * from that immediate, never from the time between two slices.
 */
let inBurst = false;

function startBurst(now: number): void {
  burstStart = now;
  if (!inBurst) {
    inBurst = true;
    setImmediate(() => {
      inBurst = false;
    });
  }
}

function pump(): void {
  scheduled = false;
  startBurst(performance.now());
  const next = waiting.shift();
  if (waiting.length > 0) {
    scheduled = true;
    setImmediate(pump);
  }
  next?.();
}

/** Resolve on a later event-loop turn, after the calls that asked before (FIFO). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!scheduled) {
      scheduled = true;
      setImmediate(pump);
    }
  });
}

/**
 * True when Lua may run now without stalling the loop: nobody is waiting for a turn, and either the loop has turned
 * since the last burst or the current burst is shorter than `sliceMs`.
 */
export function mayRunNow(sliceMs: number): boolean {
  if (waiting.length > 0) return false;
  return !inBurst || performance.now() - burstStart < sliceMs;
}

/** Mark the start of a slice (before `lua_resume`). */
export function beginSlice(): void {
  if (!inBurst) startBurst(performance.now());
}

/** When the current burst began: the time-slicing hook yields once `now - burstStart()` exceeds `sliceMs`. */
export function currentBurstStart(): number {
  return burstStart;
}

/**
 * True while a Lua thread of this JS thread is being resumed (Lua code, or a host function called from it, is on the
 * stack). A synchronous host function may start another tool call; that call must not resume its thread inside the
 * running one (the meter, the pattern watch and the running call are per JS thread), so it waits one microtask,
 * which runs only once the outer resume has returned.
 */
let resuming = 0;

export function enterVm(): void {
  resuming++;
}

export function leaveVm(): void {
  resuming--;
}

export function vmBusy(): boolean {
  return resuming > 0;
}
