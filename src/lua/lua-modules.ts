/**
 * `require("name")` for Lua tools: shared code in `lib/name.lua` beside the tool files (`require("a.b")` is
 * `lib/a/b.lua`), then in the package's own `lua/lib/`. A built-in tool (and a built-in module) sees only the
 * package's `lua/lib/`, so a user's file can never stand in for a dependency of a built-in.
 *
 * A module is a text chunk run once per VM in its own sandbox env (sealed like a tool's after it loaded), inside the
 * calling thread, so it is budgeted like tool code: a module that loops at load ends at the caller's budget. Its
 * value (`true` when it returns nothing) is cached by file path. Its `panto` has the capabilities of the TOOL whose
 * call is running (a module cannot do more than its caller; at load time, nothing). A missing module, a cycle, a
 * syntax error or an error while the module loads is a Lua error naming the file; a failed load is not cached.
 */

import path from 'node:path';
import type { LuaJsFunction, LuaState } from 'fengari';
import fengari from 'fengari';
import { readRegularFile } from '../regular-file.js';
import { type Pusher, yieldFor } from './host-yield.js';
import { pushString } from './lua-values.js';
import { capText } from './text-cap.js';

const { lua, lauxlib } = fengari;

/** What the loader needs of the running call. */
export interface ModuleCall {
  /** Module files being loaded by this call, outermost first (a cycle check). */
  readonly requiring: string[];
}

/** What the loader needs of its runtime. */
export interface ModuleHost {
  /** The running call, or null between calls. */
  current(): ModuleCall | null;
  /** Push a fresh sandbox env for a module whose `require` searches `dirs`; returns a registry ref of it. */
  newModuleEnv(dirs: readonly string[]): number;
  /** Seal a module env after it loaded (strict globals); drops the ref. */
  seal(envRef: number): void;
  /** `maxTextBytes`: the cap on error messages. */
  readonly maxTextBytes: number;
}

/** A module file larger than this is not read (source code, not data). */
const MAX_MODULE_BYTES = 4 * 1024 * 1024;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/**
 * Built once per VM: `make_require(find)` returns a `require` bound to one search list. `find` answers `true, value`
 * (cached), `false, chunk, token` (run it) or `false, nil, message`.
 */
const WRAPPER = `
local store, fail, pcall, error = ...
return function(find)
  return function(name)
    local cached, value, token = find(name)
    if cached then return value end
    if value == nil then error(token, 2) end
    local ok, result = pcall(value)
    if not ok then error(fail(token, result), 0) end
    return store(token, result)
  end
end
`;

interface Loading {
  file: string;
  envRef: number;
  call: ModuleCall;
}

export class ModuleLoader {
  readonly #host: ModuleHost;
  readonly #builtinLib: string;
  /** Registry refs of loaded modules' values, by file. */
  readonly #cache = new Map<string, number>();
  /** Modules being loaded, by the token their `require` holds. */
  readonly #loading = new Map<number, Loading>();
  #nextToken = 1;
  /** Registry ref of `make_require`. */
  readonly #makeRef: number;
  /** Every lib directory searched so far (for messages). */
  readonly #roots = new Set<string>();

  constructor(L: LuaState, host: ModuleHost, builtinLib: string, pcall: LuaJsFunction) {
    this.#host = host;
    this.#builtinLib = path.resolve(builtinLib);
    const code = new TextEncoder().encode(WRAPPER);
    if (lauxlib.luaL_loadbufferx(L, code, code.length, '=require', 't') !== lua.LUA_OK) {
      throw new Error(`require wrapper failed to compile: ${lua.lua_tolstring(L, -1)}`);
    }
    lua.lua_pushjsfunction(L, this.#store);
    lua.lua_pushjsfunction(L, this.#fail);
    lua.lua_pushjsfunction(L, pcall);
    lua.lua_getglobal(L, 'error');
    lua.lua_call(L, 4, 1);
    this.#makeRef = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
  }

  /** The search list of a tool file: its directory's `lib/`, then the package's (a built-in tool: only that). */
  dirsForTool(file: string): string[] {
    const own = path.join(path.dirname(path.resolve(file)), 'lib');
    const dirs = own === this.#builtinLib ? [own] : [own, this.#builtinLib];
    for (const d of dirs) this.#roots.add(d);
    return dirs;
  }

  /** The search list of a module found under `libRoot`. */
  #dirsForModule(libRoot: string): string[] {
    return libRoot === this.#builtinLib ? [libRoot] : [libRoot, this.#builtinLib];
  }

  /** Push a `require` function that searches `dirs`. */
  pushRequire(L: LuaState, dirs: readonly string[]): void {
    lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, this.#makeRef);
    lua.lua_pushjsfunction(L, this.#find(dirs));
    lua.lua_call(L, 1, 1);
  }

  /** `file` as error messages show it: from the directory holding its `lib/` (`lib/text/wrap.lua`). */
  #shown(file: string): string {
    for (const root of this.#roots) {
      if (file.startsWith(root + path.sep))
        return path.relative(path.dirname(root), file).split(path.sep).join('/');
    }
    return path.basename(file);
  }

  #find(dirs: readonly string[]): LuaJsFunction {
    return (L) => {
      // Errors are answered, not raised: the wrapper raises them at the caller of `require` (its position).
      if (lua.lua_type(L, 1) !== lua.LUA_TSTRING)
        return answer('require: the module name must be a string')(L);
      const name = new TextDecoder().decode((lua.lua_tolstring(L, 1) ?? new Uint8Array(0)).subarray(0, 300));
      if (!NAME.test(name) || name.length > 200) {
        return answer(
          `require: '${name}' is not a module name (letters, digits, _ and dots: "util" or "text.wrap")`,
        )(L);
      }
      const rel = `${name.split('.').join(path.sep)}.lua`;
      const candidates = dirs.map((d) => path.join(d, rel));
      if (this.#pushCached(L, candidates)) return 2;
      const call = this.#host.current();
      if (call === null) return answer('require called outside a tool call')(L);
      for (const c of candidates) {
        const at = call.requiring.indexOf(c);
        if (at >= 0) {
          const chain = [...call.requiring.slice(at), c].map((f) => this.#shown(f)).join(' -> ');
          return answer(`require cycle: ${chain}`)(L);
        }
      }
      const work = (async (): Promise<Pusher> => {
        for (const file of candidates) {
          let read: Awaited<ReturnType<typeof readRegularFile>>;
          try {
            read = await readRegularFile(file, MAX_MODULE_BYTES);
          } catch (err) {
            const code = (err as NodeJS.ErrnoException).code;
            if (code === 'ENOENT' || code === 'ENOTDIR') continue;
            return answer(`require '${name}': cannot read ${this.#shown(file)}: ${(err as Error).message}`);
          }
          if ('not' in read)
            return answer(`require '${name}': ${this.#shown(file)} is ${read.not}, not a regular file`);
          if ('over' in read)
            return answer(`require '${name}': ${this.#shown(file)} is over ${MAX_MODULE_BYTES} bytes`);
          const source = read.bytes;
          const libRoot = dirs.find((d) => file.startsWith(d + path.sep)) ?? path.dirname(file);
          return (T) => this.#compile(T, file, libRoot, source, call);
        }
        return answer(
          `module '${name}' not found: no ${rel.split(path.sep).join('/')} in ${dirs.join(', ')}`,
        );
      })();
      return yieldFor(L, 'require', work);
    };
  }

  /** Push `true, value` when one of `candidates` is loaded; false when none is. */
  #pushCached(L: LuaState, candidates: readonly string[]): boolean {
    for (const c of candidates) {
      const ref = this.#cache.get(c);
      if (ref !== undefined) {
        lua.lua_pushboolean(L, true);
        lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, ref);
        return true;
      }
    }
    return false;
  }

  /** Runs on the resumed thread (under the call's meter): push what `find` answers for a module file just read. */
  #compile(T: LuaState, file: string, libRoot: string, source: Uint8Array, call: ModuleCall): number {
    if (this.#pushCached(T, [file])) return 2; // another call loaded it meanwhile
    const chunkname = `@${this.#shown(file)}`;
    const status = lauxlib.luaL_loadbufferx(T, source, source.length, chunkname, 't');
    if (status !== lua.LUA_OK) {
      const msg = capText(lua.lua_tolstring(T, -1) ?? new Uint8Array(0), this.#host.maxTextBytes, 'message');
      lua.lua_pop(T, 1);
      lua.lua_pushboolean(T, false);
      lua.lua_pushnil(T);
      pushString(T, `require: ${msg}`);
      return 3;
    }
    const envRef = this.#host.newModuleEnv(this.#dirsForModule(libRoot));
    lua.lua_rawgeti(T, lua.LUA_REGISTRYINDEX, envRef);
    lua.lua_setupvalue(T, -2, 1);
    const token = this.#nextToken++;
    this.#loading.set(token, { file, envRef, call });
    call.requiring.push(file);
    lua.lua_pushboolean(T, false);
    lua.lua_insert(T, -2);
    lua.lua_pushinteger(T, token);
    return 3;
  }

  #end(token: number): Loading | undefined {
    const l = this.#loading.get(token);
    if (l === undefined) return undefined;
    this.#loading.delete(token);
    const i = l.call.requiring.lastIndexOf(l.file);
    if (i >= 0) l.call.requiring.splice(i, 1);
    return l;
  }

  /** `store(token, value)`: cache a loaded module's value (`true` for nil), seal its env, return the value. */
  readonly #store: LuaJsFunction = (L) => {
    const l = this.#end(lua.lua_tointeger(L, 1));
    lua.lua_settop(L, 2);
    if (lua.lua_type(L, 2) === lua.LUA_TNIL) {
      lua.lua_pop(L, 1);
      lua.lua_pushboolean(L, true);
    }
    if (l !== undefined) {
      this.#host.seal(l.envRef);
      const existing = this.#cache.get(l.file);
      if (existing !== undefined) {
        lua.lua_pop(L, 1);
        lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, existing);
      } else {
        lua.lua_pushvalue(L, 2);
        this.#cache.set(l.file, lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX));
      }
    }
    return 1;
  };

  /** `fail(token, err)`: the message of a module that raised while loading, naming its file. */
  readonly #fail: LuaJsFunction = (L) => {
    const l = this.#end(lua.lua_tointeger(L, 1));
    if (l !== undefined) lauxlib.luaL_unref(L, lua.LUA_REGISTRYINDEX, l.envRef);
    const shown = l === undefined ? 'a module' : this.#shown(l.file);
    const err =
      lua.lua_type(L, 2) === lua.LUA_TSTRING
        ? capText(lua.lua_tolstring(L, 2) ?? new Uint8Array(0), this.#host.maxTextBytes, 'message')
        : `a ${new TextDecoder().decode(lua.lua_typename(L, lua.lua_type(L, 2)))} value`;
    // A module failing because one it requires failed says so once, naming the innermost file.
    pushString(L, err.startsWith('error loading module ') ? err : `error loading module ${shown}: ${err}`);
    return 1;
  };
}

/** A Pusher for `false, nil, message` (find's failure answer; the wrapper raises it). */
function answer(message: string): Pusher {
  return (T) => {
    lua.lua_pushboolean(T, false);
    lua.lua_pushnil(T);
    pushString(T, message);
    return 3;
  };
}
