/**
 * Option tables of `panto.*` functions (`panto.exec(argv, {cwd = "src", timeout_ms = 5000})`): read raw (no
 * metamethod runs), every key checked against a spec. A wrong key or type is a Lua error naming the function and the
 * key: a bug in the tool, like a wrong argument type.
 */

import type { LuaState } from 'fengari';
import fengari from 'fengari';
import { LuaConversionError, luaToJson, typeName, viewBytes } from './lua-values.js';

const { lua, lauxlib } = fengari;
const decoder = new TextDecoder();

/**
 * What a key may hold: `string` (UTF-8 text), `bytes` (a read-only view of the Lua string, for bodies and stdin),
 * `number`, `boolean`, `string-map` (a table of string keys to string values), `string-list` (a sequence of strings).
 */
export type OptionType = 'string' | 'bytes' | 'number' | 'boolean' | 'string-map' | 'string-list';

/**
 * The options table at `idx` (nil or absent: `{}`) as a record of the keys in `spec`. Raises a Lua error (does not
 * return) for a non-table, an unknown key or a value of the wrong type.
 */
export function readOptions(
  L: LuaState,
  idx: number,
  fn: string,
  spec: Readonly<Record<string, OptionType>>,
): Record<string, unknown> {
  const t = lua.lua_type(L, idx);
  const out: Record<string, unknown> = {};
  if (t <= lua.LUA_TNIL) return out;
  if (t !== lua.LUA_TTABLE)
    return lauxlib.luaL_error(L, `${fn}: options must be a table, got ${typeName(L, t)}`);
  const abs = lua.lua_absindex(L, idx);
  lua.lua_pushnil(L);
  while (lua.lua_next(L, abs)) {
    const key =
      lua.lua_type(L, -2) === lua.LUA_TSTRING
        ? decoder.decode((lua.lua_tolstring(L, -2) ?? new Uint8Array(0)).subarray(0, 64))
        : null;
    const type = key === null ? undefined : spec[key];
    if (key === null || type === undefined) {
      const known = Object.keys(spec).join(', ');
      return lauxlib.luaL_error(L, `${fn}: unknown option '${key ?? '?'}' (known: ${known})`);
    }
    out[key] = readValue(L, lua.lua_gettop(L), fn, key, type);
    lua.lua_pop(L, 1);
  }
  return out;
}

function readValue(L: LuaState, idx: number, fn: string, key: string, type: OptionType): unknown {
  const vt = lua.lua_type(L, idx);
  const bad = (want: string): never =>
    lauxlib.luaL_error(L, `${fn}: option '${key}' must be ${want}, got ${typeName(L, vt)}`);
  switch (type) {
    case 'string':
      if (vt !== lua.LUA_TSTRING) return bad('a string');
      return decoder.decode(lua.lua_tolstring(L, idx) ?? new Uint8Array(0));
    case 'bytes':
      if (vt !== lua.LUA_TSTRING) return bad('a string');
      return viewBytes(L, idx);
    case 'number':
      if (vt !== lua.LUA_TNUMBER) return bad('a number');
      return lua.lua_tonumber(L, idx);
    case 'boolean':
      if (vt !== lua.LUA_TBOOLEAN) return bad('a boolean');
      return lua.lua_toboolean(L, idx);
    case 'string-map':
    case 'string-list': {
      if (vt !== lua.LUA_TTABLE)
        return bad(type === 'string-map' ? 'a table of strings' : 'a list of strings');
      let value: unknown;
      try {
        value = luaToJson(L, idx, key, { maxStringBytes: 1024 * 1024 });
      } catch (err) {
        if (err instanceof LuaConversionError) return lauxlib.luaL_error(L, `${fn}: ${err.message}`);
        throw err;
      }
      if (type === 'string-list') {
        const list = Array.isArray(value) ? value : Object.keys(value as object).length === 0 ? [] : null;
        if (list === null || list.some((v) => typeof v !== 'string')) return bad('a list of strings');
        return list;
      }
      if (Array.isArray(value) && value.length > 0) return bad('a table of string keys to strings');
      const map = Array.isArray(value) ? {} : (value as Record<string, unknown>);
      for (const [k, v] of Object.entries(map)) {
        if (typeof v !== 'string') {
          return lauxlib.luaL_error(L, `${fn}: option '${key}': '${k.slice(0, 64)}' must be a string`);
        }
      }
      return map;
    }
  }
}
