/**
 * The Lua sandbox: a whitelisted global environment per tool file.
 *
 * What a tool sees (docs/lua-tools.md "Sandbox"): the safe base functions (assert, error, ipairs, next, pairs, pcall,
 * xpcall, rawequal, rawget, rawlen, rawset, select, tonumber, tostring, type, getmetatable, setmetatable, _VERSION),
 * `load` (text chunks only, default environment = the tool's own), `print` (to the host log), fresh copies of
 * `string` (no `dump`; capped `rep`; guarded pattern functions), `table`, `math`, `utf8`, `os` (`time`, `clock`,
 * `date`, `difftime` only), `coroutine` (resume/wrap forward host yields; a coroutine belongs to the call that created
 * it) and `panto` (the host API).
 * What it never sees: io, os.execute/exit/getenv/remove/rename/tmpname/setlocale, require, package, dofile,
 * loadfile, debug, string.dump, collectgarbage, the real global table and the string metatable (locked).
 *
 * Invariant: the main state's global table holds the unsafe stock libraries but is unreachable from tool code —
 * every chunk we load gets its `_ENV` replaced by a sandbox env before it runs.
 */

import type { LuaJsFunction, LuaState } from 'fengari';
import fengari from 'fengari';
import type { ResolvedBudgets } from './budget.js';
import { fixPcall } from './fengari-fixes.js';
import { type HostFunctions, joinArgs, pushJsonTable } from './host-api.js';
import { HOST_YIELD, sliceYield, takeSlice } from './host-yield.js';
import { installJsonArrayMarker, pushString } from './lua-values.js';

const { lua, lauxlib, lualib } = fengari;

const BASE_FUNCTIONS = [
  'assert',
  'error',
  'ipairs',
  'next',
  'pairs',
  'rawequal',
  'rawget',
  'rawlen',
  'rawset',
  'select',
  'tonumber',
  'tostring',
  'type',
  'getmetatable',
  'setmetatable',
] as const;

const STRING_FUNCTIONS = [
  'byte',
  'char',
  'find',
  'format',
  'gmatch',
  'gsub',
  'len',
  'lower',
  'match',
  'rep',
  'reverse',
  'sub',
  'upper',
  'pack',
  'packsize',
  'unpack',
] as const;
const OS_FUNCTIONS = ['time', 'clock', 'date', 'difftime'] as const;
const COPIED_LIBS = ['table', 'math', 'utf8'] as const;

/**
 * `coroutine.resume` / `coroutine.wrap` that forward host yields (async host calls and time slices) to the enclosing
 * thread instead of handing them to the user's code, and `coroutine.create` that records the creating call. A thread
 * belongs to one call (see `Sandbox.claimThread`); resuming another call's thread is refused: it may be waiting for
 * the host, and resuming it would hand it the wrong answer and run it under the wrong call. Runs once per state;
 * receives its collaborators as arguments.
 */
const COROUTINE_WRAPPER = `
local HOST_YIELD, take_slice, slice_yield, raw_create, raw_resume, raw_yield, select, error, claim, mine = ...
local NOT_MINE = "cannot resume a coroutine of another tool call"
local forward
forward = function(co, ok, ...)
  if ok then
    local first = ...
    if first == HOST_YIELD then
      return forward(co, raw_resume(co, raw_yield(...)))
    elseif select('#', ...) == 0 and take_slice(co) then
      slice_yield()
      return forward(co, raw_resume(co))
    end
  end
  return ok, ...
end
local function create(f)
  local co = raw_create(f)
  claim(co)
  return co
end
local function resume(co, ...)
  if not mine(co) then return false, NOT_MINE end
  return forward(co, raw_resume(co, ...))
end
local function wrap_result(ok, ...)
  if ok then return ... end
  error((...), 0)
end
local function wrap(f)
  local co = create(f)
  return function(...)
    if not mine(co) then error(NOT_MINE, 2) end
    return wrap_result(forward(co, raw_resume(co, ...)))
  end
end
return resume, wrap, create
`;

/** What the sandbox needs from its owner. */
export interface SandboxHost {
  budgets: ResolvedBudgets;
  /** `print(...)`: receives the line (arguments through `tostring`, tab-separated, capped at `maxTextBytes`). */
  print: (line: string) => void;
  /** The `panto.*` functions. */
  hostFunctions: HostFunctions;
  /** Every capability a tool may declare (an undeclared one is a clear error when used). */
  capabilityNames: readonly string[];
  /** The running call (an object identifying it), or null between calls. A coroutine belongs to its creating call. */
  currentCall: () => object | null;
  /** The capabilities of the tool whose call is running (empty while a file loads), for a dynamic `panto`. */
  currentCapabilities: () => ReadonlySet<string>;
}

/** What `pushEnv` adds besides the standard globals. */
export interface EnvOptions {
  /**
   * A `panto` whose capabilities are those of the tool whose call is running, looked up at each use: for a module
   * (shared by the tools that require it) and for a file returning several tools.
   */
  dynamicPanto?: boolean;
  /** Pushes the env's `require` function. */
  pushRequire?: (L: LuaState) => void;
}

/** Builds sandbox environments on one Lua state. */
export class Sandbox {
  readonly #L: LuaState;
  /** Registry refs of template tables copied into each env. */
  readonly #templates = new Map<string, number>();
  /** Registry ref of a table of the base functions. */
  readonly #baseRef: number;
  readonly #loadFn: LuaJsFunction;
  /** The sandbox's `pcall` (with the hook fix), for wrappers written in Lua. */
  readonly pcall: LuaJsFunction;
  readonly #capabilities: HostFunctions['capabilities'];
  readonly #capabilityNames: ReadonlySet<string>;
  /** Registry ref of the metatable of a tool's `panto` table (a clear error for an undeclared capability). */
  readonly #pantoMetaRef: number;
  /** Registry ref of the metatable of a dynamic `panto` (see `EnvOptions.dynamicPanto`). */
  readonly #dynamicMetaRef: number;
  /** Registry ref of the metatable sealing a tool's globals after load (strict globals). */
  readonly #sealRef: number;
  /** The call each thread belongs to (call threads and the coroutines created in them). */
  readonly #owners = new WeakMap<LuaState, object>();

  constructor(L: LuaState, host: SandboxHost) {
    this.#L = L;
    const top = lua.lua_gettop(L);
    // Stock libraries into the (unreachable) main globals; we pick safe functions out of them.
    lauxlib.luaL_requiref(L, '_G', lualib.luaopen_base, 1);
    lauxlib.luaL_requiref(L, 'coroutine', lualib.luaopen_coroutine, 1);
    lauxlib.luaL_requiref(L, 'table', lualib.luaopen_table, 1);
    lauxlib.luaL_requiref(L, 'string', lualib.luaopen_string, 1);
    lauxlib.luaL_requiref(L, 'math', lualib.luaopen_math, 1);
    lauxlib.luaL_requiref(L, 'utf8', lualib.luaopen_utf8, 1);
    lauxlib.luaL_requiref(L, 'os', lualib.luaopen_os, 1);
    lua.lua_settop(L, top);

    // Base functions (pcall/xpcall with the hook fix).
    lua.lua_newtable(L);
    for (const name of BASE_FUNCTIONS) copyGlobalField(L, name, name);
    lua.lua_getglobal(L, '_VERSION');
    lua.lua_setfield(L, -2, '_VERSION');
    let fixedPcall: LuaJsFunction | null = null;
    for (const name of ['pcall', 'xpcall']) {
      lua.lua_getglobal(L, name);
      const original = lua.lua_tocfunction(L, -1);
      lua.lua_pop(L, 1);
      if (original === null) throw new Error(`fengari base library has no JS ${name}`);
      const fixed = fixPcall(original);
      if (name === 'pcall') fixedPcall = fixed;
      lua.lua_pushjsfunction(L, fixed);
      lua.lua_setfield(L, -2, name);
    }
    if (fixedPcall === null) throw new Error('fengari base library has no pcall');
    this.pcall = fixedPcall;
    lua.lua_pushjsfunction(L, makePrint(host.print, host.budgets.maxTextBytes));
    lua.lua_setfield(L, -2, 'print');
    this.#baseRef = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);

    // string: safe copy, used both as the string metatable's __index and as the template of `string`.
    lua.lua_newtable(L);
    const stringIdx = lua.lua_gettop(L);
    lua.lua_getglobal(L, 'string');
    for (const name of STRING_FUNCTIONS) {
      lua.lua_getfield(L, -1, name);
      const original = lua.lua_tocfunction(L, -1);
      lua.lua_pop(L, 1);
      if (original === null) throw new Error(`fengari string library has no JS ${name}`);
      lua.lua_pushjsfunction(L, guardString(name, original, host.budgets));
      lua.lua_setfield(L, stringIdx, name);
    }
    lua.lua_pop(L, 1);
    lockStringMetatable(L, stringIdx);
    this.#templates.set('string', lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX));

    for (const lib of COPIED_LIBS) {
      lua.lua_getglobal(L, lib);
      this.#templates.set(lib, copyTableRef(L));
    }

    lua.lua_newtable(L);
    lua.lua_getglobal(L, 'os');
    for (const name of OS_FUNCTIONS) {
      lua.lua_getfield(L, -1, name);
      if (name === 'date') {
        const original = lua.lua_tocfunction(L, -1);
        lua.lua_pop(L, 1);
        if (original === null) throw new Error('fengari os library has no JS date');
        lua.lua_pushjsfunction(L, utcDate(original));
      }
      lua.lua_setfield(L, -3, name);
    }
    lua.lua_pop(L, 1);
    this.#templates.set('os', lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX));

    const claim: LuaJsFunction = (T) => {
      const co = lua.lua_tothread(T, 1);
      const call = host.currentCall();
      if (co !== null && call !== null) this.#owners.set(co, call);
      return 0;
    };
    const mine: LuaJsFunction = (T) => {
      const co = lua.lua_tothread(T, 1);
      // Not a thread: let the real resume raise its own type error.
      lua.lua_pushboolean(T, co === null || this.#owners.get(co) === host.currentCall());
      return 1;
    };
    this.#templates.set('coroutine', buildCoroutineLib(L, claim, mine));

    installJsonArrayMarker(L);
    this.#capabilities = host.hostFunctions.capabilities;
    this.#capabilityNames = new Set(host.capabilityNames);
    lua.lua_newtable(L);
    for (const [name, fn] of Object.entries(host.hostFunctions.always)) {
      lua.lua_pushjsfunction(L, fn);
      lua.lua_setfield(L, -2, name);
    }
    this.#templates.set('panto', lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX));
    pushJsonTable(L, host.hostFunctions);
    this.#templates.set('panto.json', lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX));

    lua.lua_newtable(L);
    lua.lua_pushjsfunction(L, undeclaredCapability(this.#capabilityNames));
    lua.lua_setfield(L, -2, '__index');
    lua.lua_pushboolean(L, false);
    lua.lua_setfield(L, -2, '__metatable');
    this.#pantoMetaRef = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);

    lua.lua_newtable(L);
    lua.lua_pushjsfunction(
      L,
      dynamicCapability(this.#capabilityNames, this.#capabilities, host.currentCapabilities),
    );
    lua.lua_setfield(L, -2, '__index');
    lua.lua_pushboolean(L, false);
    lua.lua_setfield(L, -2, '__metatable');
    this.#dynamicMetaRef = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);

    lua.lua_newtable(L);
    lua.lua_pushjsfunction(L, undeclaredGlobal);
    lua.lua_setfield(L, -2, '__newindex');
    lua.lua_pushboolean(L, false);
    lua.lua_setfield(L, -2, '__metatable');
    this.#sealRef = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);

    this.#loadFn = sandboxLoad;
    lua.lua_settop(L, top);
  }

  /** Record that `thread` (a call's own thread) belongs to `call` (what `currentCall` returns while it runs). */
  claimThread(thread: LuaState, call: object): void {
    this.#owners.set(thread, call);
  }

  /**
   * Push a fresh environment table for one tool file onto the main state's stack. Returns a registry ref of its
   * `panto` table, to which `grant` adds the capabilities the file declares once it has loaded.
   */
  pushEnv(options: EnvOptions = {}): number {
    const L = this.#L;
    lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, this.#baseRef);
    copyTable(L, lua.lua_gettop(L));
    lua.lua_remove(L, -2);
    const env = lua.lua_gettop(L);
    for (const [name, ref] of this.#templates) {
      if (name === 'panto.json') continue;
      lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, ref);
      copyTable(L, lua.lua_gettop(L));
      lua.lua_remove(L, -2);
      lua.lua_setfield(L, env, name);
    }
    lua.lua_getfield(L, env, 'panto');
    const jsonRef = this.#templates.get('panto.json');
    if (jsonRef !== undefined) {
      lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, jsonRef);
      copyTable(L, lua.lua_gettop(L));
      lua.lua_remove(L, -2);
      lua.lua_setfield(L, -2, 'json');
    }
    lua.lua_rawgeti(
      L,
      lua.LUA_REGISTRYINDEX,
      options.dynamicPanto ? this.#dynamicMetaRef : this.#pantoMetaRef,
    );
    lua.lua_setmetatable(L, -2);
    const pantoRef = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
    if (options.pushRequire) {
      options.pushRequire(L);
      lua.lua_setfield(L, env, 'require');
    }
    lua.lua_pushvalue(L, env);
    lua.lua_pushcclosure(L, this.#loadFn, 1);
    lua.lua_setfield(L, env, 'load');
    lua.lua_pushvalue(L, env);
    lua.lua_setfield(L, env, '_G');
    return pantoRef;
  }

  /** Make the `panto` table `pantoRef` (from `pushEnv`) dynamic (see `EnvOptions.dynamicPanto`); drops the ref. */
  makeDynamic(pantoRef: number): void {
    const L = this.#L;
    lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, pantoRef);
    lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, this.#dynamicMetaRef);
    lua.lua_setmetatable(L, -2);
    lua.lua_pop(L, 1);
    lauxlib.luaL_unref(L, lua.LUA_REGISTRYINDEX, pantoRef);
  }

  /** Add the capability functions in `names` to the `panto` table `pantoRef` (from `pushEnv`); drops the ref. */
  grant(pantoRef: number, names: readonly string[]): void {
    const L = this.#L;
    lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, pantoRef);
    for (const name of names) {
      const fn = this.#capabilities[name];
      if (fn === undefined) throw new Error(`no host function for capability '${name}'`);
      lua.lua_pushjsfunction(L, fn);
      lua.lua_setfield(L, -2, name);
    }
    lua.lua_pop(L, 1);
    lauxlib.luaL_unref(L, lua.LUA_REGISTRYINDEX, pantoRef);
  }

  /**
   * Strict globals: after a tool file has loaded, assigning a global it did not define is an error, so a forgotten
   * `local` in a handler cannot leak one call's data into a concurrent call. Drops the ref.
   */
  seal(envRef: number): void {
    const L = this.#L;
    lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, envRef);
    lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, this.#sealRef);
    lua.lua_setmetatable(L, -2);
    lua.lua_pop(L, 1);
    lauxlib.luaL_unref(L, lua.LUA_REGISTRYINDEX, envRef);
  }
}

/** `__index` of a tool's `panto` table: a clear error for a capability the tool did not declare. */
function undeclaredCapability(names: ReadonlySet<string>): LuaJsFunction {
  return (L) => {
    if (lua.lua_type(L, 2) === lua.LUA_TSTRING && lua.lua_rawlen(L, 2) <= 64) {
      const key = new TextDecoder().decode(lua.lua_tolstring(L, 2) ?? new Uint8Array(0));
      if (names.has(key)) {
        return lauxlib.luaL_error(
          L,
          `panto.${key} is not available to this tool: declare capabilities = { "${key}" } in the tool file ` +
            '(the host must grant it)',
        );
      }
    }
    lua.lua_pushnil(L);
    return 1;
  };
}

/**
 * `__index` of a dynamic `panto`: the capability function when the tool whose call is running declared it, the
 * undeclared-capability error when not.
 */
function dynamicCapability(
  names: ReadonlySet<string>,
  fns: Readonly<Record<string, LuaJsFunction>>,
  current: () => ReadonlySet<string>,
): LuaJsFunction {
  const undeclared = undeclaredCapability(names);
  return (L) => {
    if (lua.lua_type(L, 2) === lua.LUA_TSTRING && lua.lua_rawlen(L, 2) <= 64) {
      const key = new TextDecoder().decode(lua.lua_tolstring(L, 2) ?? new Uint8Array(0));
      const fn = fns[key];
      if (fn !== undefined && Object.hasOwn(fns, key) && current().has(key)) {
        lua.lua_pushjsfunction(L, fn);
        return 1;
      }
    }
    return undeclared(L);
  };
}

/** `__newindex` of a loaded tool's globals. */
const undeclaredGlobal: LuaJsFunction = (L) => {
  const key =
    lua.lua_type(L, 2) === lua.LUA_TSTRING
      ? new TextDecoder().decode((lua.lua_tolstring(L, 2) ?? new Uint8Array(0)).subarray(0, 100))
      : '?';
  return lauxlib.luaL_error(
    L,
    `assignment to undeclared global '${key}' (use a local; globals are shared by all calls of a tool, so only ` +
      'the tool file itself may define them)',
  );
};

/** `load(chunk [, chunkname [, mode [, env]]])`: string chunks, text mode only; default env = the tool's env. */
const sandboxLoad: LuaJsFunction = (L) => {
  const nargs = lua.lua_gettop(L);
  if (lua.lua_type(L, 1) !== lua.LUA_TSTRING) {
    lua.lua_pushnil(L);
    pushString(L, 'load: only string chunks are supported in the sandbox');
    return 2;
  }
  const chunk = lua.lua_tolstring(L, 1) ?? new Uint8Array(0);
  const name = lua.lua_type(L, 2) === lua.LUA_TSTRING ? (lua.lua_tolstring(L, 2) ?? '=(load)') : '=(load)';
  const status = lauxlib.luaL_loadbufferx(L, chunk, chunk.length, name, 't');
  if (status !== lua.LUA_OK) {
    lua.lua_pushnil(L);
    lua.lua_insert(L, -2);
    return 2;
  }
  if (nargs >= 4) lua.lua_pushvalue(L, 4);
  else lua.lua_pushvalue(L, lua.lua_upvalueindex(1));
  if (lua.lua_setupvalue(L, -2, 1) === null) lua.lua_pop(L, 1);
  return 1;
};

function makePrint(sink: (line: string) => void, max: number): LuaJsFunction {
  return (L) => {
    sink(joinArgs(L, max));
    return 0;
  };
}

const PATTERN_SPECIALS = /[\^$*+?.()[\]%-]/;

/** Wrap a string-library function with the sandbox's caps (rep size, pattern subject length). */
function guardString(name: string, original: LuaJsFunction, budgets: ResolvedBudgets): LuaJsFunction {
  if (name === 'rep') {
    return (L) => {
      const s = lauxlib.luaL_checklstring(L, 1);
      const n = lauxlib.luaL_checkinteger(L, 2);
      const sep = lua.lua_type(L, 3) <= lua.LUA_TNIL ? 0 : lauxlib.luaL_checklstring(L, 3).length;
      const total = n <= 0 ? 0 : s.length * n + sep * (n - 1);
      if (total > budgets.maxStringBytes) {
        return lauxlib.luaL_error(
          L,
          `string.rep would build ${total} bytes, over the sandbox cap of ${budgets.maxStringBytes} bytes`,
        );
      }
      // fengari loops n times even when nothing is copied: `("", 2^31 - 1)` would hold one instruction for seconds.
      if (total === 0) {
        lua.lua_pushliteral(L, '');
        return 1;
      }
      return original(L);
    };
  }
  if (name === 'find' || name === 'match' || name === 'gmatch' || name === 'gsub') {
    return (L) => {
      const subject = lauxlib.luaL_checklstring(L, 1);
      if (subject.length > budgets.maxPatternSubjectBytes) {
        const pattern = lauxlib.luaL_checklstring(L, 2);
        const plain = name === 'find' && lua.lua_toboolean(L, 4);
        if (!plain && PATTERN_SPECIALS.test(String.fromCharCode(...pattern.subarray(0, 4096)))) {
          return lauxlib.luaL_error(
            L,
            `string.${name}: a pattern over ${subject.length} bytes is over the sandbox cap of ` +
              `${budgets.maxPatternSubjectBytes} bytes (use string.find with plain=true, or work on smaller pieces)`,
          );
        }
      }
      return original(L);
    };
  }
  return original;
}

/**
 * fengari's `os.date("!fmt")` prints the `!` and formats local time (only `"!*t"` honours UTC). This wrapper formats
 * `t` shifted by the local UTC offset at `t`, without the `!`, which gives the UTC fields.
 */
function utcDate(original: LuaJsFunction): LuaJsFunction {
  return (L) => {
    if (lua.lua_type(L, 1) === lua.LUA_TSTRING) {
      const fmt = lua.lua_tolstring(L, 1) ?? new Uint8Array(0);
      const isTable = fmt[1] === 0x2a && fmt[2] === 0x74; // "!*t" already works
      if (fmt[0] === 0x21 && !isTable) {
        const t =
          lua.lua_type(L, 2) <= lua.LUA_TNIL
            ? Math.floor(Date.now() / 1000)
            : lauxlib.luaL_checkinteger(L, 2);
        const shifted = t + new Date(t * 1000).getTimezoneOffset() * 60;
        lua.lua_settop(L, 0);
        lua.lua_pushlstring(L, fmt.subarray(1), fmt.length - 1);
        lua.lua_pushinteger(L, shifted);
      }
    }
    return original(L);
  };
}

/** Replace the string metatable's __index with our safe string table and lock the metatable. */
function lockStringMetatable(L: LuaState, stringIdx: number): void {
  lua.lua_pushliteral(L, '');
  if (!lua.lua_getmetatable(L, -1)) throw new Error('fengari: strings have no metatable');
  lua.lua_pushvalue(L, stringIdx);
  lua.lua_setfield(L, -2, '__index');
  lua.lua_pushboolean(L, false);
  lua.lua_setfield(L, -2, '__metatable');
  lua.lua_pop(L, 2);
}

function buildCoroutineLib(L: LuaState, claim: LuaJsFunction, mine: LuaJsFunction): number {
  const code = new TextEncoder().encode(COROUTINE_WRAPPER);
  if (lauxlib.luaL_loadbufferx(L, code, code.length, '=coroutine', 't') !== lua.LUA_OK) {
    throw new Error(`coroutine wrapper failed to compile: ${lua.lua_tolstring(L, -1)}`);
  }
  lua.lua_getglobal(L, 'coroutine');
  const co = lua.lua_gettop(L);
  lua.lua_pushvalue(L, co - 1);
  lua.lua_pushlightuserdata(L, HOST_YIELD);
  lua.lua_pushjsfunction(L, takeSlice);
  lua.lua_pushjsfunction(L, sliceYield);
  lua.lua_getfield(L, co, 'create');
  lua.lua_getfield(L, co, 'resume');
  lua.lua_getfield(L, co, 'yield');
  lua.lua_getglobal(L, 'select');
  lua.lua_getglobal(L, 'error');
  lua.lua_pushjsfunction(L, claim);
  lua.lua_pushjsfunction(L, mine);
  lua.lua_call(L, 10, 3);
  // stack: chunk, coroutine, resume, wrap, create
  lua.lua_newtable(L);
  for (const name of ['yield', 'status', 'running', 'isyieldable']) {
    lua.lua_getfield(L, co, name);
    lua.lua_setfield(L, -2, name);
  }
  lua.lua_pushvalue(L, -4);
  lua.lua_setfield(L, -2, 'resume');
  lua.lua_pushvalue(L, -3);
  lua.lua_setfield(L, -2, 'wrap');
  lua.lua_pushvalue(L, -2);
  lua.lua_setfield(L, -2, 'create');
  const ref = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
  lua.lua_pop(L, 5);
  return ref;
}

/** Copy global `from` into field `to` of the table on top of the stack. */
function copyGlobalField(L: LuaState, from: string, to: string): void {
  lua.lua_getglobal(L, from);
  lua.lua_setfield(L, -2, to);
}

/** Shallow-copy the table on top of the stack into a new table; pop the original; return a registry ref. */
function copyTableRef(L: LuaState): number {
  copyTable(L, lua.lua_gettop(L));
  lua.lua_remove(L, -2);
  return lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
}

/** Push a shallow copy of the table at absolute index `idx`. */
function copyTable(L: LuaState, idx: number): void {
  lua.lua_newtable(L);
  const dst = lua.lua_gettop(L);
  lua.lua_pushnil(L);
  while (lua.lua_next(L, idx)) {
    lua.lua_pushvalue(L, -2);
    lua.lua_insert(L, -2);
    lua.lua_rawset(L, dst);
  }
}
