/**
 * Load-time fixes for fengari 0.1.5, effective even where the patched copy is not the one loaded (the package bundles
 * the patched fengari; a bundler could still swap in an unpatched one).
 *
 * 1. The pcall hook bug. `lua_pcallk` (lapi.js) does `ci.callstatus &= ~CIST_OAH | L.allowhook`, which (by operator
 *    precedence) never SETS the CIST_OAH bit. When a pcall inside a coroutine recovers from an error, ldo.js restores
 *    `L.allowhook` from that bit -> 0, and every hook (our instruction budget) is switched off for the rest of the
 *    call: `pcall(error, 'x'); while true do end` would run forever. `fixPcall` wraps the base library's
 *    `pcall`/`xpcall`: it stores the correct bit BEFORE delegating, which makes the buggy line a no-op
 *    (`x &= ~1 | 1` leaves x unchanged). patches/fengari+0.1.5.patch fixes the line itself in development.
 *
 * 2. A deadline inside pattern matching. A single `string.find/match/gmatch/gsub` runs inside one VM instruction,
 *    so the count hook cannot stop it. fengari's lstrlib calls `lualib.lua_assert` once per start position of a
 *    match (`reprepstate`); `installPatternWatch` replaces that no-op with a cheap check so an unanchored pattern
 *    blow-up over a long subject is interrupted at the next start position. This is the fallback for an UNPATCHED
 *    fengari; the patch (3) also checks inside a match, so anchored blow-ups stop too.
 *
 * 3. Resource accounting (patches/fengari+0.1.5.patch adds `llimits.luai_panto`): fengari calls `alloc(n, charge)`
 *    before it allocates a Lua string, a string buffer, a table or a table entry, and `step()` every few thousand
 *    units of work inside long-running library functions (pattern matching, string building, `table.move`,
 *    `table.concat`, `table.sort`, `unpack`, the lexer). `setMeter` routes both to the running call, whose budgets
 *    throw to stop it. `accountingAvailable()` says whether the patch is applied (it is in this repository; a consumer
 *    that loads an unpatched fengari gets the weaker checks of (2) and the sandbox's size caps).
 *
 * 4. Room for the native-error handler. When a JS exception escapes a library function or an accounting hook in
 *    the middle of a VM instruction, the frame can be full (`L.top` at `ci.top`), so fengari's push of the
 *    `lua_atnativeerror` handler fails, the thread ends with status -1 and, after an error a `pcall` had recovered,
 *    `lua_resume` trips its own assertion ("assertion failed" instead of the budget message). The patch
 *    (`luaD_rawrunprotected` in ldo.js) makes room first, using the error reserve above LUAI_MAXSTACK as
 *    `luaD_growstack` does, and ends with LUA_ERRERR ("error in error handling", a typed Lua error) when even the
 *    reserve is full. `installNativeErrorRoom` is the fallback for an UNPATCHED fengari (it cannot grow past
 *    LUAI_MAXSTACK, so there the at-max case still ends in the assertion).
 */

import type { LuaJsFunction } from 'fengari';
import fengari from 'fengari';
import lapi from 'fengari/src/lapi.js';
import ldo from 'fengari/src/ldo.js';
import llimits from 'fengari/src/llimits.js';
import lstate from 'fengari/src/lstate.js';

const CIST_OAH = lstate.CIST_OAH;

/** Wrap a base-library `pcall`/`xpcall` so a recovered error in a coroutine cannot switch hooks off. */
export function fixPcall(original: LuaJsFunction): LuaJsFunction {
  return (L) => {
    const ci = L.ci;
    ci.callstatus = (ci.callstatus & ~CIST_OAH) | L.allowhook;
    return original(L);
  };
}

/** Called every `PATTERN_CHECK_EVERY` start positions of a pattern match; throw to abort the match. */
export type PatternWatch = () => void;

const PATTERN_CHECK_EVERY = 32;
let watch: PatternWatch | null = null;
let installed = false;
let counter = 0;

/**
 * Install the pattern-match check (once per process) and set the function it calls. `null` disables the check.
 * Only one Lua call runs at a time (fengari is synchronous), so the runtime sets the watch around each resume.
 */
export function setPatternWatch(fn: PatternWatch | null): void {
  if (!installed) {
    installed = true;
    const previous = fengari.lualib.lua_assert;
    fengari.lualib.lua_assert = (c: unknown) => {
      if (watch !== null && ++counter >= PATTERN_CHECK_EVERY) {
        counter = 0;
        watch();
      }
      previous(c);
    };
  }
  watch = fn;
}

/** What the running call does with fengari's accounting hooks. Both may throw to stop the call. */
export interface Meter {
  /** `bytes` are about to be allocated; `charge` false: only check that they would fit. */
  alloc(bytes: number, charge: boolean): void;
  /** Called from long-running library functions every few thousand units of work. */
  step(): void;
}

let meter: Meter | null = null;
let accountingInstalled = false;

/** True when fengari carries the accounting patch (patches/fengari+0.1.5.patch). */
export function accountingAvailable(): boolean {
  return llimits.luai_panto !== undefined && llimits.luai_panto.version === 1;
}

/** Route fengari's accounting hooks to `m` (the running call), or nowhere (`null`). Synchronous callers only. */
export function setMeter(m: Meter | null): void {
  const hooks = llimits.luai_panto;
  if (!accountingInstalled && hooks !== undefined) {
    accountingInstalled = true;
    hooks.alloc = (bytes, charge) => meter?.alloc(bytes, charge);
    hooks.step = () => meter?.step();
  }
  meter = m;
}

/**
 * Run `fn` with the accounting hooks detached (nothing is charged, nothing can throw for a budget). For the few
 * bytes fengari's native-error path must push: if that push threw, fengari would end the thread with status -1,
 * which its `lua_resume` does not expect after a recovered error (an "assertion failed" out of the VM).
 */
export function withoutMeter<T>(fn: () => T): T {
  const saved = meter;
  meter = null;
  try {
    return fn();
  } finally {
    meter = saved;
  }
}

let nativeErrorRoomInstalled = false;

/** True when fengari carries the native-error room fix (4) of patches/fengari+0.1.5.patch. */
export function nativeErrorRoomPatched(): boolean {
  return ldo.luai_pantoerrorroom === true;
}

/**
 * Fix 4, fallback for an unpatched fengari (a no-op when the patch is applied): `luaD_rawrunprotected` pushes the
 * `lua_atnativeerror` handler and the exception with the checked API (`lua_pushcfunction`,
 * `lua_pushlightuserdata`), through the exported `lapi` object. This makes the push of OUR handler reserve two slots
 * first (`lua_checkstack`, which grows the stack and the frame top); the frame is being unwound anyway. At
 * LUAI_MAXSTACK `lua_checkstack` fails and the assertion can still come back; only the patch covers that case.
 * Installed once per process.
 */
export function installNativeErrorRoom(): void {
  if (nativeErrorRoomInstalled) return;
  nativeErrorRoomInstalled = true;
  if (nativeErrorRoomPatched()) return;
  const push = lapi.lua_pushcfunction;
  lapi.lua_pushcfunction = (L, fn) => {
    if (fn !== null && fn === L.l_G.atnativeerror) withoutMeter(() => lapi.lua_checkstack(L, 2));
    push(L, fn);
  };
}
