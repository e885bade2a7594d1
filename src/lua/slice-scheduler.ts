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
/** When the current burst of Lua work began (a turn granted by the pump, or Lua starting after a pause). */
let burstStart = 0;
/** When the last slice ended. */
let lastEnd = 0;
/** A pause longer than this between two slices means the event loop was free: a new burst begins. */
const PAUSE_MS = 1;

function pump(): void {
  scheduled = false;
  burstStart = performance.now();
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
 * True when Lua may run now without stalling the loop: nobody is waiting for a turn and the current burst of Lua work
 * is shorter than `sliceMs` (or Lua has been idle for a moment, so a new burst begins).
 */
export function mayRunNow(sliceMs: number): boolean {
  if (waiting.length > 0) return false;
  const now = performance.now();
  return now - lastEnd > PAUSE_MS || now - burstStart < sliceMs;
}

/** Mark the start of a slice (before `lua_resume`). */
export function beginSlice(): void {
  const now = performance.now();
  if (now - lastEnd > PAUSE_MS && now - burstStart > PAUSE_MS) burstStart = now;
}

/** Mark the end of a slice (after `lua_resume` returned). */
export function endSlice(): void {
  lastEnd = performance.now();
}

/** When the current burst began: the time-slicing hook yields once `now - burstStart()` exceeds `sliceMs`. */
export function currentBurstStart(): number {
  return burstStart;
}
