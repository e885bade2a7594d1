/**
 * Values across the JS <-> Lua boundary: JSON-like values to Lua tables and back, and bytes without copies.
 *
 * Conventions (documented in docs/lua-tools.md):
 * - JS `null`/`undefined` become `nil` (so a JSON `null` inside an array leaves a hole).
 * - JS numbers that are integers within fengari's 32-bit integer range become Lua integers, others Lua floats.
 * - Arrays become sequences (1-based). A Lua table converts back to an array when its keys are exactly 1..n (n >= 1);
 *   any other table (including an empty one) converts to an object with string keys.
 * - Lua strings convert to JS strings by UTF-8 decoding (invalid sequences become U+FFFD).
 */

import type { LuaState } from 'fengari';
import fengari from 'fengari';
import lobject from 'fengari/src/lobject.js';
import lstring from 'fengari/src/lstring.js';

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

/** Push a JSON-like JS value. Uint8Array values become Lua strings holding the same bytes (copied). */
export function pushJson(L: LuaState, value: unknown, depth = 0): void {
  if (!lua.lua_checkstack(L, 3)) throw new Error('Lua stack overflow');
  if (value === null || value === undefined) {
    lua.lua_pushnil(L);
  } else if (typeof value === 'boolean') {
    lua.lua_pushboolean(L, value);
  } else if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX) lua.lua_pushinteger(L, value);
    else lua.lua_pushnumber(L, value);
  } else if (typeof value === 'string') {
    pushString(L, value);
  } else if (value instanceof Uint8Array) {
    pushBytesNoCopy(L, Uint8Array.prototype.slice.call(value));
  } else if (typeof value === 'bigint') {
    lua.lua_pushnumber(L, Number(value));
  } else if (depth >= MAX_DEPTH) {
    throw new LuaConversionError(`value nested deeper than ${MAX_DEPTH} levels`);
  } else if (Array.isArray(value)) {
    lua.lua_createtable(L, value.length, 0);
    for (let i = 0; i < value.length; i++) {
      pushJson(L, value[i], depth + 1);
      lua.lua_rawseti(L, -2, i + 1);
    }
  } else if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    lua.lua_createtable(L, 0, entries.length);
    for (const [k, v] of entries) {
      pushKey(L, k);
      pushJson(L, v, depth + 1);
      lua.lua_rawset(L, -3);
    }
  } else {
    lua.lua_pushnil(L);
  }
}

/**
 * Convert the Lua value at `idx` to a JSON-able JS value. Throws `LuaConversionError` naming the path for functions,
 * threads, userdata, NaN/infinite numbers, cycles and nesting deeper than 64 levels.
 */
export function luaToJson(L: LuaState, idx: number, path = 'value'): JsonValue {
  const abs = idx < 0 && idx > lua.LUA_REGISTRYINDEX ? lua.lua_gettop(L) + idx + 1 : idx;
  return convert(L, abs, path, new Set(), 0);
}

function convert(L: LuaState, idx: number, path: string, seen: Set<unknown>, depth: number): JsonValue {
  const t = lua.lua_type(L, idx);
  switch (t) {
    case lua.LUA_TNIL:
    case lua.LUA_TNONE:
      return null;
    case lua.LUA_TBOOLEAN:
      return lua.lua_toboolean(L, idx);
    case lua.LUA_TNUMBER: {
      const n = lua.lua_isinteger(L, idx) ? lua.lua_tointeger(L, idx) : lua.lua_tonumber(L, idx);
      if (!Number.isFinite(n)) throw new LuaConversionError(`${path} is ${n}, which has no JSON form`);
      return n;
    }
    case lua.LUA_TSTRING:
      return toText(L, idx) ?? '';
    case lua.LUA_TTABLE:
      return convertTable(L, idx, path, seen, depth);
    default:
      throw new LuaConversionError(`${path} is a ${typeName(L, t)}, which has no JSON form`);
  }
}

function convertTable(L: LuaState, idx: number, path: string, seen: Set<unknown>, depth: number): JsonValue {
  if (depth >= MAX_DEPTH) throw new LuaConversionError(`${path} is nested deeper than ${MAX_DEPTH} levels`);
  const ptr = lua.lua_topointer(L, idx);
  if (seen.has(ptr)) throw new LuaConversionError(`${path} refers back to itself (a cycle)`);
  seen.add(ptr);
  if (!lua.lua_checkstack(L, 4)) throw new LuaConversionError(`${path}: Lua stack overflow`);
  const n = lua.lua_rawlen(L, idx);
  let count = 0;
  let sequence = n > 0;
  lua.lua_pushnil(L);
  while (lua.lua_next(L, idx)) {
    count++;
    if (sequence) {
      const kt = lua.lua_type(L, -2);
      if (kt !== lua.LUA_TNUMBER || !lua.lua_isinteger(L, -2)) sequence = false;
      else {
        const k = lua.lua_tointeger(L, -2);
        if (k < 1 || k > n) sequence = false;
      }
    }
    lua.lua_pop(L, 1);
  }
  if (sequence && count !== n) sequence = false;
  let out: JsonValue;
  if (sequence) {
    const arr: JsonValue[] = new Array(n);
    for (let i = 1; i <= n; i++) {
      lua.lua_rawgeti(L, idx, i);
      arr[i - 1] = convert(L, lua.lua_gettop(L), `${path}[${i}]`, seen, depth + 1);
      lua.lua_pop(L, 1);
    }
    out = arr;
  } else {
    const obj: { [key: string]: JsonValue } = {};
    lua.lua_pushnil(L);
    while (lua.lua_next(L, idx)) {
      const kt = lua.lua_type(L, -2);
      let key: string;
      if (kt === lua.LUA_TSTRING) key = toText(L, -2) ?? '';
      else if (kt === lua.LUA_TNUMBER) {
        key = String(lua.lua_isinteger(L, -2) ? lua.lua_tointeger(L, -2) : lua.lua_tonumber(L, -2));
      } else {
        lua.lua_pop(L, 2);
        throw new LuaConversionError(
          `${path} has a ${typeName(L, kt)} key; only string and number keys convert`,
        );
      }
      try {
        obj[key] = convert(L, lua.lua_gettop(L), `${path}.${key}`, seen, depth + 1);
      } catch (err) {
        lua.lua_pop(L, 2);
        throw err;
      }
      lua.lua_pop(L, 1);
    }
    out = obj;
  }
  seen.delete(ptr);
  return out;
}

/** The Lua type name of type tag `t` ("nil", "number", "table", ...). */
export function typeName(L: LuaState, t: number): string {
  if (t === lua.LUA_TNONE) return 'no value';
  return decoder.decode(lua.lua_typename(L, t));
}
