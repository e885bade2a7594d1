/**
 * The host API a Lua tool sees as `panto.*` (docs/lua-tools.md "Host API").
 *
 * Conventions: every function is a plain call in Lua; the file functions are async in JS and suspend only the
 * calling coroutine (other calls keep running). Failure returns `nil, message` (never raises), so a tool can
 * `local data, err = panto.read_file(p); if not data then return nil, err end`. Wrong argument TYPES raise a Lua
 * error (a bug in the tool, not a runtime condition).
 *
 * All paths are confined to the call's workspace root (see workspace-paths.ts).
 */

import { readdir, readFile, stat } from 'node:fs/promises';
import type { LuaJsFunction, LuaState } from 'fengari';
import fengari from 'fengari';
import { sniffMedia } from '../media/index.js';
import type { ToolUpdate } from '../tool.js';
import type { ResolvedBudgets } from './budget.js';
import { failure, type Pusher, yieldFor } from './host-yield.js';
import type { LuaLogLevel } from './lua-log.js';
import { LuaConversionError, luaToJson, pushBytesNoCopy, pushJson, pushString } from './lua-values.js';
import { type Denylist, resolveInWorkspace } from './workspace-paths.js';

const { lua, lauxlib } = fengari;

/** What host functions need to know about the call that is running right now. */
export interface HostCall {
  /** Real path of the call's workspace root. */
  readonly root: string;
  log(level: LuaLogLevel, message: string): void;
  /** Report progress to the host (`ToolContext.update`); a no-op when the host gave no callback. */
  update(update: ToolUpdate): void;
}

export interface HostApiOptions {
  /** The running call. Host functions run synchronously inside a resume, so this is always the caller's call. */
  current: () => HostCall;
  denylist: Denylist;
  budgets: ResolvedBudgets;
}

const decoder = new TextDecoder();

/** The `panto` table's functions. */
export function createHostFunctions(opts: HostApiOptions): Record<string, LuaJsFunction> {
  const { current, denylist, budgets } = opts;

  /** Resolve against the CURRENT call's root; must be called synchronously from the host function. */
  const resolve = (p: string) => resolveInWorkspace(current().root, p, denylist);

  const readFileFn: LuaJsFunction = (L) => {
    const p = checkPath(L, 'panto.read_file');
    const resolved = resolve(p);
    const work = (async (): Promise<Pusher> => {
      const r = await resolved;
      if (!r.ok) return failure(r.error);
      const st = await stat(r.abs);
      if (st.isDirectory()) return failure(`${p}: is a directory`);
      if (!st.isFile()) return failure(`${p}: not a regular file`);
      if (st.size > budgets.maxReadBytes) {
        return failure(`${p}: ${st.size} bytes, over the read cap of ${budgets.maxReadBytes} bytes`);
      }
      const data = await readFile(r.abs);
      // A fresh buffer owned by nobody else: hand it to Lua without a copy.
      return (T) => {
        pushBytesNoCopy(T, data);
        return 1;
      };
    })();
    return yieldFor(L, 'panto.read_file', work);
  };

  const statFn: LuaJsFunction = (L) => {
    const p = checkPath(L, 'panto.stat');
    const resolved = resolve(p);
    const work = (async (): Promise<Pusher> => {
      const r = await resolved;
      if (!r.ok) return failure(r.error);
      const st = await stat(r.abs);
      const info = {
        type: st.isFile() ? 'file' : st.isDirectory() ? 'directory' : 'other',
        size: st.size,
        mtime: Math.floor(st.mtimeMs / 1000),
      };
      return pushOne(info);
    })();
    return yieldFor(L, 'panto.stat', work);
  };

  const listDirFn: LuaJsFunction = (L) => {
    const p = lua.lua_type(L, 1) <= lua.LUA_TNIL ? '.' : checkPath(L, 'panto.list_dir');
    const resolved = resolve(p);
    const work = (async (): Promise<Pusher> => {
      const r = await resolved;
      if (!r.ok) return failure(r.error);
      const st = await stat(r.abs);
      if (!st.isDirectory()) return failure(`${p}: not a directory`);
      const entries = await readdir(r.abs, { withFileTypes: true });
      // Secrets on the denylist are not even named: a tool cannot read them, and their names can leak too.
      const list = entries
        .filter((e) => denylist.match(r.rel === '' ? e.name : `${r.rel}/${e.name}`) === null)
        .map((e) => ({
          name: e.name,
          type: e.isFile()
            ? 'file'
            : e.isDirectory()
              ? 'directory'
              : e.isSymbolicLink()
                ? 'symlink'
                : 'other',
        }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      return pushOne(list);
    })();
    return yieldFor(L, 'panto.list_dir', work);
  };

  const sniffFn: LuaJsFunction = (L) => {
    lauxlib.luaL_checktype(L, 1, lua.LUA_TSTRING);
    const bytes = lua.lua_tolstring(L, 1) ?? new Uint8Array(0);
    let type: string | null;
    try {
      type = sniffMedia(bytes);
    } catch (err) {
      lua.lua_pushnil(L);
      pushString(L, `panto.sniff unavailable: ${(err as Error).message}`);
      return 2;
    }
    if (type === null) lua.lua_pushnil(L);
    else pushString(L, type);
    return 1;
  };

  const jsonEncodeFn: LuaJsFunction = (L) => {
    lauxlib.luaL_checkany(L, 1);
    let text: string;
    try {
      text = JSON.stringify(luaToJson(L, 1, 'value'));
    } catch (err) {
      if (!(err instanceof LuaConversionError)) throw err;
      lua.lua_pushnil(L);
      pushString(L, `panto.json_encode: ${err.message}`);
      return 2;
    }
    pushString(L, text);
    return 1;
  };

  const jsonDecodeFn: LuaJsFunction = (L) => {
    const s = lauxlib.luaL_checklstring(L, 1);
    let value: unknown;
    try {
      value = JSON.parse(decoder.decode(s));
    } catch (err) {
      lua.lua_pushnil(L);
      pushString(L, `panto.json_decode: ${(err as Error).message}`);
      return 2;
    }
    try {
      pushJson(L, value);
    } catch (err) {
      // Nested deeper than pushJson goes: drop what was pushed so far, keep the argument.
      if (!(err instanceof LuaConversionError)) throw err;
      lua.lua_settop(L, 1);
      lua.lua_pushnil(L);
      pushString(L, `panto.json_decode: ${err.message}`);
      return 2;
    }
    return 1;
  };

  const logFn: LuaJsFunction = (L) => {
    const n = lua.lua_gettop(L);
    const pieces: string[] = [];
    for (let i = 1; i <= n; i++) {
      pieces.push(decoder.decode(lauxlib.luaL_tolstring(L, i)));
      lua.lua_pop(L, 1);
    }
    current().log('info', pieces.join('\t'));
    return 0;
  };

  /** `panto.progress(message [, fraction])`: progress for the host (never sent to a model). */
  const progressFn: LuaJsFunction = (L) => {
    const message = decoder.decode(lauxlib.luaL_checklstring(L, 1));
    const update: ToolUpdate = { message };
    if (lua.lua_type(L, 2) > lua.LUA_TNIL) {
      const fraction = lauxlib.luaL_checknumber(L, 2);
      if (!(fraction >= 0 && fraction <= 1))
        return lauxlib.luaL_error(L, 'panto.progress: fraction must be in [0, 1]');
      update.progress = fraction;
    }
    current().update(update);
    return 0;
  };

  return {
    read_file: readFileFn,
    stat: statFn,
    list_dir: listDirFn,
    sniff: sniffFn,
    json_encode: jsonEncodeFn,
    json_decode: jsonDecodeFn,
    log: logFn,
    progress: progressFn,
  };
}

function checkPath(L: LuaState, fn: string): string {
  if (lua.lua_type(L, 1) !== lua.LUA_TSTRING) {
    return lauxlib.luaL_error(L, `${fn}: path must be a string`);
  }
  return decoder.decode(lua.lua_tolstring(L, 1) ?? new Uint8Array(0));
}

/** A Pusher for one flat value (a stat record, a directory listing): nothing there can fail to convert. */
function pushOne(value: unknown): Pusher {
  return (L) => {
    pushJson(L, value);
    return 1;
  };
}
