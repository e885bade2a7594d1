#!/usr/bin/env node
// Heavy edge check (about 2 s and 200 MB, so not in the vitest unit run): a JS exception thrown by a JS function
// whose frame is full at the very end of a LUAI_MAXSTACK (1,000,000-slot) stack. fengari 0.1.5 cannot push its
// native-error handler there and ends the call with status -1 (inside a coroutine after a recovered error,
// lua_resume then fails its own assertion); patches/fengari+0.1.5.patch makes room in the error reserve above the
// limit, so the call ends with LUA_ERRRUN and the handler's message. Real fengari, no libpanto code involved.
//
// Usage: node test/lua/native-error-at-max-stack.mjs   (exit 0: holds; 1: broken)

import fengari from 'fengari';

const { lua, lauxlib, to_luastring } = fengari;
const MAX_STACK = 1_000_000; // LUAI_MAXSTACK
const EXTRA_STACK = 5;
const MIN_STACK = 20; // LUA_MINSTACK: what a call of a JS function reserves

const L = lauxlib.luaL_newstate();
lua.lua_atnativeerror(L, (T) => {
  lua.lua_pushstring(T, to_luastring(`native: ${lua.lua_touserdata(T, 1)?.message}`));
  return 1;
});
const failures = [];
// gap: how many slots short of the stack's end the JS function's full frame ends (0 and 1 are the broken edge).
for (const gap of [0, 1]) {
  lua.lua_settop(L, 0);
  const n = MAX_STACK - 1 - EXTRA_STACK - MIN_STACK - 1 - gap;
  if (!lua.lua_checkstack(L, n + 1)) failures.push(`gap ${gap}: lua_checkstack(${n + 1}) failed`);
  lua.lua_settop(L, n);
  lua.lua_pushjsfunction(L, (T) => {
    while (T.top < T.ci.top) lua.lua_pushnil(T);
    throw new Error('boom');
  });
  const status = lua.lua_pcall(L, 0, 0, 0);
  const message = status === -1 ? null : lua.lua_tojsstring(L, -1);
  if (status !== lua.LUA_ERRRUN || message !== 'native: boom')
    failures.push(
      `gap ${gap}: status ${status}, message ${JSON.stringify(message)} (want ${lua.LUA_ERRRUN}, "native: boom")`,
    );
}
if (failures.length > 0) {
  console.error(`native error at the max stack: ${failures.join('; ')}`);
  process.exit(1);
}
console.log('native error at the max stack: the handler runs, status LUA_ERRRUN');
