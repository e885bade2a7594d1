import type { LuaState } from 'fengari';
import fengari from 'fengari';
import { describe, expect, it } from 'vitest';
import { withPosition } from '../../src/lua/lua-runtime.js';

const { lua, lauxlib, to_luastring } = fengari;

describe('the position of a call stopped between slices', () => {
  it('is read from a thread the slice hook suspended with its stack full, without overflowing it', () => {
    // The state the host meets when a call's time budget is found spent after a slice yield (seen on a loaded
    // machine): suspended at its first instruction, the Lua frame fills the thread's stack up to its top.
    const L = lauxlib.luaL_newstate();
    const T = lua.lua_newthread(L);
    const chunk = to_luastring('local a, b, c = 0, 1, 2 while true do a = a + b + c end');
    expect(lauxlib.luaL_loadbufferx(T, chunk, chunk.length, to_luastring('=spin.lua'), null)).toBe(
      lua.LUA_OK,
    );
    lua.lua_sethook(T, (t: LuaState) => lua.lua_yield(t, 0), lua.LUA_MASKCOUNT, 1);
    const reason = 'time budget exceeded (300 ms)';
    const seen: string[] = [];
    for (let i = 0; i < 50; i++) {
      expect(lua.lua_resume(T, null, 0)).toBe(lua.LUA_YIELD);
      seen.push(withPosition(reason, T));
    }
    expect(seen[0]).toMatch(/^time budget exceeded \(300 ms\)( at spin\.lua:1)?$/);
    expect(new Set(seen.slice(1))).toEqual(new Set([`${reason} at spin.lua:1`]));
  });
});
