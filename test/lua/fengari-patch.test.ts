import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

// The behaviour (`pcall(error,'x'); while true do end` is stopped) is tested in budgets.test.ts and holds with or
// without the patch (the sandbox's pcall/xpcall carry a load-time fix). This checks that the development install
// applied patches/fengari+0.1.5.patch (npm install runs it through the `prepare` script).
describe('patches/fengari+0.1.5.patch', () => {
  it('is applied to the installed fengari (lua_pcallk keeps the allowhook flag)', () => {
    const lapi = readFileSync(createRequire(import.meta.url).resolve('fengari/src/lapi.js'), 'utf8');
    expect(lapi).toContain('ci.callstatus = (ci.callstatus & ~lstate.CIST_OAH) | L.allowhook;');
    expect(lapi).not.toContain('ci.callstatus &= ~lstate.CIST_OAH | L.allowhook;');
  });
});

describe('the resource-accounting part of the patch', () => {
  it('is applied: fengari exposes luai_panto, and the runtime sees it', async () => {
    const { accountingAvailable } = await import('../../src/lua/fengari-fixes.js');
    expect(accountingAvailable()).toBe(true);
    const lstrlib = readFileSync(createRequire(import.meta.url).resolve('fengari/src/lstrlib.js'), 'utf8');
    expect(lstrlib).toContain('luai_pantostep(1);');
  });
});

describe('the native-error room part of the patch', () => {
  it('is applied: ldo.js makes room for the handler before pushing it, and the shim stands down', async () => {
    const { nativeErrorRoomPatched } = await import('../../src/lua/fengari-fixes.js');
    expect(nativeErrorRoomPatched()).toBe(true);
    const ldo = readFileSync(createRequire(import.meta.url).resolve('fengari/src/ldo.js'), 'utf8');
    expect(ldo).toContain('lj.status = LUA_ERRERR;  /* no room even in the reserve */');
  });
});
