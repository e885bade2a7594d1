/**
 * The yield protocol between Lua threads and the scheduler (lua-runtime.ts).
 *
 * - An async host function (e.g. `panto.read_file`) yields TWO values: the private `HOST_YIELD` sentinel and the
 *   pending `Promise<Pusher>` (both as light userdata). The scheduler awaits the promise, lets the `Pusher` push the
 *   answer onto the thread and resumes it; to Lua the call looks synchronous.
 * - The budget hook yields ZERO values to give the event loop a turn (time slicing) and records the yielding thread
 *   in `sliceYields`, so the scheduler (and the coroutine wrapper) can tell it from a user's `coroutine.yield()`.
 * - A user coroutine would swallow both kinds of yield; the sandbox's `coroutine.resume`/`wrap` forward them to the
 *   enclosing thread (see sandbox.ts, `COROUTINE_WRAPPER`).
 */

import type { LuaJsFunction, LuaState } from 'fengari';
import fengari from 'fengari';
import { pushString } from './lua-values.js';

const { lua } = fengari;

/** Pushes a host function's results onto a resumed thread; returns how many values it pushed. */
export type Pusher = (L: LuaState) => number;

/** The private marker of a host yield. Never reachable from Lua code. */
export const HOST_YIELD: object = Object.freeze({ hostYield: true });

/** Threads whose last yield came from the time-slicing hook. */
export const sliceYields = new WeakSet<LuaState>();

/**
 * Suspend the calling Lua thread until `work` settles; then the function returns what the `Pusher` pushes. A
 * rejection becomes `nil, message` (the Lua failure convention). Must be called as `return yieldFor(L, ...)` from a
 * JS function called by Lua. Raises a Lua error where yielding is impossible (inside a `table.sort` comparator, a
 * `string.gsub` callback, `__tostring` or `__pairs`).
 */
export function yieldFor(L: LuaState, what: string, work: Promise<Pusher>): number {
  if (!lua.lua_isyieldable(L)) {
    work.catch(() => {});
    pushString(
      L,
      `${what} cannot be called here: it waits for the host, and this code runs inside a callback that cannot yield ` +
        '(a table.sort comparator, a string.gsub function, __tostring or __pairs)',
    );
    return lua.lua_error(L);
  }
  const settled: Promise<Pusher> = work.catch((err: unknown) =>
    failure(err instanceof Error ? err.message : String(err)),
  );
  lua.lua_pushlightuserdata(L, HOST_YIELD);
  lua.lua_pushlightuserdata(L, settled);
  return lua.lua_yield(L, 2);
}

/** A Pusher for `nil, message`. */
export function failure(message: string): Pusher {
  return (L) => {
    lua.lua_pushnil(L);
    pushString(L, message);
    return 2;
  };
}

/** `take_slice(co)` for the coroutine wrapper: true (once) when `co` last yielded for time slicing. */
export const takeSlice: LuaJsFunction = (L) => {
  const co = lua.lua_tothread(L, 1);
  lua.lua_pushboolean(L, co !== null && sliceYields.delete(co));
  return 1;
};

/** `slice_yield()` for the coroutine wrapper: pass a time-slice yield on to the enclosing thread, when possible. */
export const sliceYield: LuaJsFunction = (L) => {
  if (!lua.lua_isyieldable(L)) return 0;
  sliceYields.add(L);
  return lua.lua_yield(L, 0);
};
