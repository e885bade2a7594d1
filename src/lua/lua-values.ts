/**
 * Values across the JS <-> Lua boundary: JSON-like values to Lua tables and back, and bytes without copies.
 *
 * Conventions (documented in docs/lua-tools.md):
 * - `null` is `panto.json.null` inside arrays, inside nested objects and in `panto.json_decode` results; a top-level
 *   member of the tool's arguments that is `null` is left out (`nil`). `panto.json.null` converts back to `null`.
 * - JS numbers that are integers within fengari's 32-bit integer range become Lua integers, others Lua floats.
 * - Arrays become sequences (1-based) marked as JSON arrays. A Lua table converts back to an array when it is marked
 *   (`panto.json.array(t)`) or its keys are exactly 1..n (n >= 1); any other table (including an unmarked empty one)
 *   converts to an object with string keys (`__proto__` is kept as a key; `1` and `"1"` together are an error).
 * - Lua strings convert to JS strings by UTF-8 decoding (invalid sequences become U+FFFD).
 */

import { isUtf8 } from 'node:buffer';
import type { LuaState } from 'fengari';
import fengari from 'fengari';
import lobject from 'fengari/src/lobject.js';
import lstring from 'fengari/src/lstring.js';
import type { HostValue } from './host-functions.js';
import { capText } from './text-cap.js';

const { lua } = fengari;

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const MAX_DEPTH = 64;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8');

/** A JSON-able value as produced by `luaToJson`. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Thrown by `luaToJson` for a value that has no JSON form; `path` names where (e.g. `meta.items[2]`). */
export class LuaConversionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LuaConversionError';
  }
}

/**
 * Push `bytes` as a Lua string WITHOUT copying. The caller hands ownership over: the array must never be mutated
 * afterwards (Lua strings are immutable). Uses fengari internals (`luaS_bless`), pinned to fengari 0.1.5.
 */
export function pushBytesNoCopy(L: LuaState, bytes: Uint8Array): void {
  if (bytes.length === 0) {
    lua.lua_pushliteral(L, '');
    return;
  }
  if (!lua.lua_checkstack(L, 1)) throw new Error('Lua stack overflow');
  // fengari treats any Uint8Array as a luastring; a Buffer is one.
  lobject.pushsvalue2s(L, lstring.luaS_bless(L, bytes));
}

/** Push a JS string as a Lua string (UTF-8), with a single encode and no further copy. */
export function pushString(L: LuaState, s: string): void {
  pushBytesNoCopy(L, encoder.encode(s));
}

/**
 * A read-only Buffer VIEW of the Lua string at `idx` (no copy). Returns null when the value is not a string (numbers
 * are NOT converted: `lua_tolstring` would convert them in place and break table traversal).
 */
export function viewBytes(L: LuaState, idx: number): Buffer | null {
  if (lua.lua_type(L, idx) !== lua.LUA_TSTRING) return null;
  const s = lua.lua_tolstring(L, idx);
  if (s === null) return null;
  return Buffer.from(s.buffer, s.byteOffset, s.byteLength);
}

/** Decode the Lua string at `idx` as UTF-8 text. Returns null when the value is not a string. */
export function toText(L: LuaState, idx: number): string | null {
  if (lua.lua_type(L, idx) !== lua.LUA_TSTRING) return null;
  const s = lua.lua_tolstring(L, idx);
  return s === null ? null : decoder.decode(s);
}

/** Decode bytes as UTF-8 text (invalid sequences become U+FFFD). */
export function decodeText(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

const keyCache = new Map<string, Uint8Array>();

/** Push a table key: short keys repeat across calls, so their encodings are cached (Lua strings are immutable). */
function pushKey(L: LuaState, k: string): void {
  if (k.length > 32) {
    pushString(L, k);
    return;
  }
  let bytes = keyCache.get(k);
  if (bytes === undefined) {
    if (keyCache.size >= 4096) keyCache.clear();
    bytes = encoder.encode(k);
    keyCache.set(k, bytes);
  }
  pushBytesNoCopy(L, bytes);
}

/** The private identity of `panto.json.null` (a light userdata in Lua). */
export const JSON_NULL: object = Object.freeze({ jsonNull: true });
/** Registry key (light userdata) of the metatable that marks a table as a JSON array (`panto.json.array`). */
const ARRAY_MT_KEY: object = Object.freeze({ jsonArrayMetatable: true });

/**
 * Create the JSON-array marker metatable on `L` (once per state). Pushes nothing. It is protected (`__metatable`), so
 * no tool can change it (it is shared by every array of every tool) or swap it on a marked table.
 */
export function installJsonArrayMarker(L: LuaState): void {
  lua.lua_newtable(L);
  pushString(L, 'json.array');
  lua.lua_setfield(L, -2, '__name');
  pushString(L, 'json.array');
  lua.lua_setfield(L, -2, '__metatable');
  lua.lua_rawsetp(L, lua.LUA_REGISTRYINDEX, ARRAY_MT_KEY);
}

/** Set the JSON-array marker metatable on the table at the top of the stack. */
export function markJsonArray(L: LuaState): void {
  if (lua.lua_rawgetp(L, lua.LUA_REGISTRYINDEX, ARRAY_MT_KEY) === lua.LUA_TTABLE) lua.lua_setmetatable(L, -2);
  else lua.lua_pop(L, 1);
}

/**
 * How `null` enters Lua: `'args'` (a tool's arguments: a TOP-LEVEL member that is `null` is `nil`, an absent optional
 * argument; deeper it is `panto.json.null`) or `'json'` (`panto.json.null` everywhere, lossless).
 */
export type NullMode = 'args' | 'json';

/**
 * Push a JSON-like JS value. The mapping (docs/lua-tools.md "JSON mapping"):
 * - `null` inside an array or a nested object becomes `panto.json.null` (positions and keys are kept); a top-level
 *   member that is `null` becomes `nil` in `'args'` mode (an absent optional argument).
 * - Arrays become sequences marked as JSON arrays (so `[]` round-trips as `[]`); objects become tables with string keys.
 * - Uint8Array values become Lua strings holding the same bytes: copied, or handed over without a copy when `owned`
 *   (the caller gives up every Uint8Array in `value`; see `prepareHostValue`).
 */
export function pushJson(
  L: LuaState,
  value: unknown,
  mode: NullMode = 'args',
  depth = 0,
  owned = false,
): void {
  if (!lua.lua_checkstack(L, 3)) throw new Error('Lua stack overflow');
  if (value === null || value === undefined) {
    if (mode === 'json' && value === null) lua.lua_pushlightuserdata(L, JSON_NULL);
    else lua.lua_pushnil(L);
  } else if (typeof value === 'boolean') {
    lua.lua_pushboolean(L, value);
  } else if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX) lua.lua_pushinteger(L, value);
    else lua.lua_pushnumber(L, value);
  } else if (typeof value === 'string') {
    pushString(L, value);
  } else if (value instanceof Uint8Array) {
    pushBytesNoCopy(L, owned ? value : Uint8Array.prototype.slice.call(value));
  } else if (typeof value === 'bigint') {
    lua.lua_pushnumber(L, Number(value));
  } else if (depth >= MAX_DEPTH) {
    throw new LuaConversionError(`value nested deeper than ${MAX_DEPTH} levels`);
  } else if (Array.isArray(value)) {
    lua.lua_createtable(L, value.length, 0);
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (v === null || v === undefined) lua.lua_pushlightuserdata(L, JSON_NULL);
      else pushJson(L, v, mode, depth + 1, owned);
      lua.lua_rawseti(L, -2, i + 1);
    }
    markJsonArray(L);
  } else if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    lua.lua_createtable(L, 0, entries.length);
    for (const [k, v] of entries) {
      if (v === undefined || (v === null && mode === 'args' && depth === 0)) continue;
      pushKey(L, k);
      if (v === null) lua.lua_pushlightuserdata(L, JSON_NULL);
      else pushJson(L, v, mode, depth + 1, owned);
      lua.lua_rawset(L, -3);
    }
  } else {
    lua.lua_pushnil(L);
  }
}

/** Options of `luaToJson`. */
export interface ToJsonOptions {
  /** Cut strings longer than this many UTF-8 bytes (with a note). Default: no cap. */
  maxStringBytes?: number;
  /**
   * Strings that are not valid UTF-8 become `Uint8Array` copies of their bytes instead of text with U+FFFD (host
   * function arguments: bytes pass unchanged). `maxStringBytes` does not apply to them.
   */
  bytes?: boolean;
}

/**
 * Convert the Lua value at `idx` to a JSON-able JS value. Reads tables RAW (no metamethod ever runs, so a hostile
 * `__index`/`__pairs`/`__len` cannot raise or loop in the host). `panto.json.null` becomes `null`; a table marked with
 * `panto.json.array` or whose keys are exactly `1..n` (n >= 1) becomes an array (holes filled with `null` in a marked
 * one); any other table becomes an object. Throws `LuaConversionError` naming the path for functions, threads,
 * userdata, NaN/infinite numbers, cycles, nesting deeper than 64 levels, and a table holding both `1` and `"1"`.
 */
export function luaToJson(L: LuaState, idx: number, path = 'value', options: ToJsonOptions = {}): JsonValue {
  const abs = idx < 0 && idx > lua.LUA_REGISTRYINDEX ? lua.lua_gettop(L) + idx + 1 : idx;
  const ctx: Ctx = {
    seen: new Set(),
    maxStr: options.maxStringBytes ?? Number.POSITIVE_INFINITY,
    bytes: options.bytes === true,
  };
  return convert(L, abs, path, ctx, 0) as JsonValue;
}

/**
 * The Lua value at `idx` as a host function's argument: `luaToJson` where a string that is not valid UTF-8 becomes a
 * `Uint8Array` copy of its bytes (bytes pass unchanged), and `nil`/no value is `null`.
 */
export function luaToHostValue(L: LuaState, idx: number, path: string): HostValue {
  const abs = idx < 0 && idx > lua.LUA_REGISTRYINDEX ? lua.lua_gettop(L) + idx + 1 : idx;
  return convert(
    L,
    abs,
    path,
    { seen: new Set(), maxStr: Number.POSITIVE_INFINITY, bytes: true },
    0,
  ) as HostValue;
}

interface Ctx {
  seen: Set<unknown>;
  maxStr: number;
  bytes: boolean;
}

function convert(L: LuaState, idx: number, path: string, ctx: Ctx, depth: number): JsonValue | Uint8Array {
  const t = lua.lua_type(L, idx);
  switch (t) {
    case lua.LUA_TNIL:
    case lua.LUA_TNONE:
      return null;
    case lua.LUA_TBOOLEAN:
      return lua.lua_toboolean(L, idx);
    case lua.LUA_TNUMBER: {
      const n = lua.lua_isinteger(L, idx) ? lua.lua_tointeger(L, idx) : lua.lua_tonumber(L, idx);
      if (!Number.isFinite(n))
        throw new LuaConversionError(`${notePath(path)} is ${n}, which has no JSON form`);
      return n;
    }
    case lua.LUA_TSTRING: {
      const bytes = lua.lua_tolstring(L, idx);
      if (bytes === null) return '';
      if (ctx.bytes && !isUtf8(bytes)) return Uint8Array.prototype.slice.call(bytes);
      // Through capText even when short: invalid UTF-8 grows when decoded (U+FFFD is 3 bytes).
      return Number.isFinite(ctx.maxStr) ? capText(bytes, ctx.maxStr, notePath(path)) : decoder.decode(bytes);
    }
    case lua.LUA_TTABLE:
      return convertTable(L, idx, path, ctx, depth);
    case lua.LUA_TLIGHTUSERDATA:
      if (lua.lua_touserdata(L, idx) === JSON_NULL) return null;
      throw new LuaConversionError(`${notePath(path)} is a userdata, which has no JSON form`);
    default:
      throw new LuaConversionError(`${notePath(path)} is a ${typeName(L, t)}, which has no JSON form`);
  }
}

/** True when the table at `idx` carries the JSON-array marker metatable (read raw). */
function isMarkedArray(L: LuaState, idx: number): boolean {
  if (!lua.lua_getmetatable(L, idx)) return false;
  lua.lua_rawgetp(L, lua.LUA_REGISTRYINDEX, ARRAY_MT_KEY);
  const marked = lua.lua_rawequal(L, -1, -2);
  lua.lua_pop(L, 2);
  return marked;
}

function convertTable(L: LuaState, idx: number, path: string, ctx: Ctx, depth: number): JsonValue {
  const { seen, maxStr } = ctx;
  if (depth >= MAX_DEPTH)
    throw new LuaConversionError(`${notePath(path)} is nested deeper than ${MAX_DEPTH} levels`);
  const ptr = lua.lua_topointer(L, idx);
  if (seen.has(ptr)) throw new LuaConversionError(`${notePath(path)} refers back to itself (a cycle)`);
  seen.add(ptr);
  if (!lua.lua_checkstack(L, 4)) throw new LuaConversionError(`${notePath(path)}: Lua stack overflow`);
  const marked = isMarkedArray(L, idx);
  let count = 0;
  let maxKey = 0;
  let allPositiveInts = true;
  lua.lua_pushnil(L);
  while (lua.lua_next(L, idx)) {
    count++;
    if (allPositiveInts) {
      const kt = lua.lua_type(L, -2);
      if (kt !== lua.LUA_TNUMBER || !lua.lua_isinteger(L, -2)) allPositiveInts = false;
      else {
        const k = lua.lua_tointeger(L, -2);
        if (k < 1) allPositiveInts = false;
        else if (k > maxKey) maxKey = k;
      }
    }
    lua.lua_pop(L, 1);
  }
  if (marked && !allPositiveInts) {
    throw new LuaConversionError(
      `${notePath(path)} is marked as a JSON array but has keys other than 1, 2, 3, ...`,
    );
  }
  if (marked && maxKey > count * 2 + 16) {
    throw new LuaConversionError(
      `${notePath(path)} is a JSON array with too many holes (${count} values up to [${maxKey}])`,
    );
  }
  const sequence = marked || (allPositiveInts && count > 0 && maxKey === count);
  let out: JsonValue;
  if (sequence) {
    const arr: JsonValue[] = new Array(maxKey);
    for (let i = 1; i <= maxKey; i++) {
      lua.lua_rawgeti(L, idx, i);
      arr[i - 1] = convert(L, lua.lua_gettop(L), `${path}[${i}]`, ctx, depth + 1) as JsonValue;
      lua.lua_pop(L, 1);
    }
    out = arr;
  } else {
    const obj: { [key: string]: JsonValue } = {};
    const numericKeys = new Set<string>();
    lua.lua_pushnil(L);
    while (lua.lua_next(L, idx)) {
      const kt = lua.lua_type(L, -2);
      let key: string;
      if (kt === lua.LUA_TSTRING) {
        const keyBytes = lua.lua_rawlen(L, -2);
        // A key is never cut (two cut keys could collide): a key longer than the cap is refused.
        if (keyBytes > maxStr) {
          lua.lua_pop(L, 2);
          throw new LuaConversionError(
            `${notePath(path)} has a key of ${keyBytes} bytes; keys are at most ${maxStr} bytes`,
          );
        }
        key = toText(L, -2) ?? '';
      } else if (kt === lua.LUA_TNUMBER) {
        key = String(lua.lua_isinteger(L, -2) ? lua.lua_tointeger(L, -2) : lua.lua_tonumber(L, -2));
        numericKeys.add(key);
      } else {
        lua.lua_pop(L, 2);
        throw new LuaConversionError(
          `${notePath(path)} has a ${typeName(L, kt)} key; only string and number keys convert`,
        );
      }
      if (Object.hasOwn(obj, key)) {
        lua.lua_pop(L, 2);
        throw new LuaConversionError(
          `${notePath(path)} has both the number key ${key} and the string key "${key}"; they would be one JSON key`,
        );
      }
      let v: JsonValue;
      try {
        v = convert(L, lua.lua_gettop(L), `${path}.${key}`, ctx, depth + 1) as JsonValue;
      } catch (err) {
        lua.lua_pop(L, 2);
        throw err;
      }
      // A plain assignment of "__proto__" would set the prototype and lose the key.
      Object.defineProperty(obj, key, { value: v, enumerable: true, writable: true, configurable: true });
      lua.lua_pop(L, 1);
    }
    out = obj;
  }
  seen.delete(ptr);
  return out;
}

/** Longest path quoted in a note or an error; longer paths keep their start and end around an ellipsis. */
export const MAX_NOTE_PATH = 200;

/** `path` shortened to at most `MAX_NOTE_PATH` characters for a note or an error message. */
export function notePath(path: string): string {
  if (path.length <= MAX_NOTE_PATH) return path;
  const head = Math.floor((MAX_NOTE_PATH - 3) / 2);
  return `${path.slice(0, head)}...${path.slice(path.length - (MAX_NOTE_PATH - 3 - head))}`;
}

/** The Lua type name of type tag `t` ("nil", "number", "table", ...). */
export function typeName(L: LuaState, t: number): string {
  if (t === lua.LUA_TNONE) return 'no value';
  return decoder.decode(lua.lua_typename(L, t));
}
