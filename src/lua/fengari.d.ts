/**
 * Type declarations for the parts of fengari 0.1.5 (Lua 5.3 in JS) that the Lua tool host uses. fengari ships no
 * types; these mirror the Lua 5.3 C API as fengari exposes it (strings are `Uint8Array` "luastrings"; a JS string is
 * accepted wherever fengari calls `from_userstring`). Internal-module declarations (`fengari/src/*.js`) cover the few
 * internals we rely on for zero-copy pushes and the pcall hook fix; they are pinned to fengari 0.1.5.
 */

declare module 'fengari' {
  /** fengari's CallInfo (internal fields we touch). */
  export interface CallInfo {
    callstatus: number;
  }
  /** A Lua thread (`lua_State *`). */
  export interface LuaState {
    ci: CallInfo;
    /** The CallInfo of the first level (C calling Lua): `ci` is back at it when the thread has nothing running. */
    base_ci: CallInfo;
    /** The thread status (LUA_OK, LUA_YIELD or an error status). */
    status: number;
    allowhook: number;
    /** The global state; `atnativeerror` is the handler set with `lua_atnativeerror`. */
    l_G: { atnativeerror: LuaJsFunction | null };
    readonly __brand_lua_State: never;
  }
  export type LuaString = Uint8Array;
  export type LuaJsFunction = (L: LuaState) => number;
  export type LuaHook = (L: LuaState, ar: unknown) => void;

  export interface LuaApi {
    LUA_OK: 0;
    LUA_YIELD: 1;
    LUA_ERRRUN: 2;
    LUA_ERRSYNTAX: 3;
    LUA_ERRMEM: 4;
    LUA_ERRGCMM: 5;
    LUA_ERRERR: 6;
    LUA_TNONE: -1;
    LUA_TNIL: 0;
    LUA_TBOOLEAN: 1;
    LUA_TLIGHTUSERDATA: 2;
    LUA_TNUMBER: 3;
    LUA_TSTRING: 4;
    LUA_TTABLE: 5;
    LUA_TFUNCTION: 6;
    LUA_TUSERDATA: 7;
    LUA_TTHREAD: 8;
    LUA_MASKCOUNT: number;
    LUA_MULTRET: number;
    LUA_REGISTRYINDEX: number;
    LUA_RIDX_GLOBALS: number;
    lua_atnativeerror(L: LuaState, f: LuaJsFunction): LuaJsFunction | undefined;
    lua_call(L: LuaState, nargs: number, nresults: number): void;
    lua_checkstack(L: LuaState, n: number): boolean;
    lua_createtable(L: LuaState, narr: number, nrec: number): void;
    lua_error(L: LuaState): never;
    lua_getfield(L: LuaState, idx: number, k: LuaString | string): number;
    lua_getglobal(L: LuaState, name: LuaString | string): number;
    lua_getmetatable(L: LuaState, idx: number): boolean;
    lua_gettop(L: LuaState): number;
    lua_insert(L: LuaState, idx: number): void;
    lua_isinteger(L: LuaState, idx: number): boolean;
    lua_isyieldable(L: LuaState): boolean;
    lua_newtable(L: LuaState): void;
    lua_newthread(L: LuaState): LuaState;
    lua_next(L: LuaState, idx: number): boolean;
    lua_pop(L: LuaState, n: number): void;
    lua_pushboolean(L: LuaState, b: boolean | number): void;
    lua_pushcclosure(L: LuaState, fn: LuaJsFunction, n: number): void;
    lua_pushinteger(L: LuaState, n: number): void;
    lua_pushjsfunction(L: LuaState, fn: LuaJsFunction): void;
    lua_pushlightuserdata(L: LuaState, p: unknown): void;
    lua_pushliteral(L: LuaState, s: string): LuaString;
    lua_pushlstring(L: LuaState, s: LuaString | string, len: number): LuaString;
    lua_pushnil(L: LuaState): void;
    lua_pushnumber(L: LuaState, n: number): void;
    lua_pushstring(L: LuaState, s: LuaString | string): LuaString;
    lua_pushvalue(L: LuaState, idx: number): void;
    lua_rawequal(L: LuaState, a: number, b: number): boolean;
    lua_rawget(L: LuaState, idx: number): number;
    lua_rawgeti(L: LuaState, idx: number, n: number): number;
    lua_absindex(L: LuaState, idx: number): number;
    lua_rawgetp(L: LuaState, idx: number, p: unknown): number;
    lua_rawsetp(L: LuaState, idx: number, p: unknown): void;
    lua_rawlen(L: LuaState, idx: number): number;
    lua_rawset(L: LuaState, idx: number): void;
    lua_rawseti(L: LuaState, idx: number, n: number): void;
    lua_remove(L: LuaState, idx: number): void;
    lua_resume(L: LuaState, from: LuaState | null, nargs: number): number;
    lua_setfield(L: LuaState, idx: number, k: LuaString | string): void;
    lua_setglobal(L: LuaState, name: LuaString | string): void;
    lua_sethook(L: LuaState, f: LuaHook | null, mask: number, count: number): void;
    lua_setmetatable(L: LuaState, idx: number): void;
    lua_settop(L: LuaState, idx: number): void;
    lua_setupvalue(L: LuaState, funcindex: number, n: number): LuaString | null;
    lua_toboolean(L: LuaState, idx: number): boolean;
    lua_tocfunction(L: LuaState, idx: number): LuaJsFunction | null;
    lua_tointeger(L: LuaState, idx: number): number;
    lua_tolstring(L: LuaState, idx: number): LuaString | null;
    lua_tonumber(L: LuaState, idx: number): number;
    lua_topointer(L: LuaState, idx: number): unknown;
    lua_tothread(L: LuaState, idx: number): LuaState | null;
    lua_touserdata(L: LuaState, idx: number): unknown;
    lua_type(L: LuaState, idx: number): number;
    lua_typename(L: LuaState, tp: number): LuaString;
    lua_upvalueindex(i: number): number;
    lua_xmove(from: LuaState, to: LuaState, n: number): void;
    lua_yield(L: LuaState, n: number): number;
  }

  export interface LauxApi {
    LUA_LOADED_TABLE: LuaString;
    luaL_checkany(L: LuaState, arg: number): void;
    luaL_checkinteger(L: LuaState, arg: number): number;
    luaL_checknumber(L: LuaState, arg: number): number;
    luaL_checklstring(L: LuaState, arg: number): LuaString;
    luaL_checkstack(L: LuaState, sz: number, msg: string | null): void;
    luaL_checktype(L: LuaState, arg: number, t: number): void;
    luaL_where(L: LuaState, level: number): void;
    luaL_error(L: LuaState, fmt: LuaString | string, ...args: unknown[]): never;
    luaL_len(L: LuaState, idx: number): number;
    luaL_loadbufferx(
      L: LuaState,
      buff: LuaString,
      size: number,
      name: LuaString | string,
      mode: LuaString | string | null,
    ): number;
    luaL_newstate(): LuaState;
    luaL_optinteger(L: LuaState, arg: number, def: number): number;
    luaL_ref(L: LuaState, t: number): number;
    luaL_requiref(L: LuaState, modname: LuaString | string, openf: LuaJsFunction, glb: number): void;
    luaL_tolstring(L: LuaState, idx: number): LuaString;
    luaL_traceback(L: LuaState, L1: LuaState, msg: LuaString | string | null, level: number): void;
    luaL_unref(L: LuaState, t: number, ref: number): void;
  }

  export interface LualibApi {
    lua_assert: (c: unknown) => void;
    luaopen_base: LuaJsFunction;
    luaopen_coroutine: LuaJsFunction;
    luaopen_math: LuaJsFunction;
    luaopen_os: LuaJsFunction;
    luaopen_string: LuaJsFunction;
    luaopen_table: LuaJsFunction;
    luaopen_utf8: LuaJsFunction;
  }

  const fengari: {
    lua: LuaApi;
    lauxlib: LauxApi;
    lualib: LualibApi;
    to_luastring(s: string, cache?: boolean): LuaString;
    to_jsstring(s: LuaString, from?: number, to?: number, replacement?: boolean): string;
  };
  export default fengari;
}

declare module 'fengari/src/lstring.js' {
  import type { LuaState, LuaString } from 'fengari';

  const lstring: {
    /** Wrap a byte array as a Lua string WITHOUT copying (the array must never be mutated afterwards). */
    luaS_bless(L: LuaState, str: LuaString): unknown;
  };
  export default lstring;
}

declare module 'fengari/src/lobject.js' {
  import type { LuaState } from 'fengari';

  const lobject: {
    /** Push a TString onto the stack (no copy, no stack check). */
    pushsvalue2s(L: LuaState, ts: unknown): void;
  };
  export default lobject;
}

declare module 'fengari/src/lstate.js' {
  const lstate: {
    /** CallInfo flag: the original value of `allowhook`, restored when a yieldable pcall recovers from an error. */
    CIST_OAH: number;
  };
  export default lstate;
}

declare module 'fengari/src/llimits.js' {
  /** The resource-accounting hooks added by patches/fengari+0.1.5.patch (absent in an unpatched fengari). */
  export interface PantoAccounting {
    alloc: ((bytes: number, charge: boolean) => void) | null;
    step: (() => void) | null;
    n: number;
    version: number;
  }
  const llimits: { luai_panto?: PantoAccounting };
  export default llimits;
}

declare module 'fengari/src/lapi.js' {
  import type { LuaJsFunction, LuaState } from 'fengari';

  /** The module object ldo.js calls through (so a replaced function takes effect there). */
  const lapi: {
    lua_pushcfunction(L: LuaState, fn: LuaJsFunction | null): void;
    lua_checkstack(L: LuaState, n: number): boolean;
  };
  export default lapi;
}

declare module 'fengari/src/ldo.js' {
  /** `luai_pantoerrorroom`: set by patches/fengari+0.1.5.patch (room for the native-error handler). */
  const ldo: { luai_pantoerrorroom?: boolean };
  export default ldo;
}
