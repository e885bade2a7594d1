/**
 * The host API a Lua tool sees as `panto.*` (docs/lua-tools.md "Host API").
 *
 * Conventions: every function is a plain call in Lua; the file functions are async in JS and suspend only the
 * calling coroutine (other calls keep running). Failure returns `nil, message` (never raises), so a tool can
 * `local data, err = panto.read_file(p); if not data then return nil, err end`. Wrong argument TYPES raise a Lua
 * error (a bug in the tool, not a runtime condition).
 *
 * All paths are confined to the call's workspace root (see workspace-paths.ts).
 *
 * Capabilities: the file functions (`read_file`, `stat`, `list_dir`) are present in a tool's `panto` table only when
 * the tool file declares them (`capabilities = {"read_file"}`) and the host grants them; everything else (`sniff`,
 * `json_*`, `json`, `log`, `progress`) is always there. Text a tool hands to the host (log lines, progress messages)
 * is capped at `maxTextBytes`.
 */

import type { LuaJsFunction, LuaState } from 'fengari';
import fengari from 'fengari';
import { sniffMedia } from '../media/index.js';
import type { ToolUpdate } from '../tool.js';
import { AddressRules } from './address-rules.js';
import type { ResolvedBudgets } from './budget.js';
import { commandEnv, DEFAULT_EXEC_TIMEOUT_MS, DEFAULT_MAX_OUTPUT_BYTES, runCommand } from './exec-command.js';
import { DEFAULT_FETCH_MAX_BYTES, DEFAULT_FETCH_TIMEOUT_MS, fetchUrl } from './fetch-url.js';
import { listWorkspaceDir, readWorkspaceFile, statWorkspace } from './file-read.js';
import { makeWorkspaceDir, writeWorkspaceFile } from './file-write.js';
import type { HostCallInfo, HostInvoker, HostOutcome, HostValue } from './host-functions.js';
import { failure, type Pusher, yieldFor } from './host-yield.js';
import type { LuaLogLevel } from './lua-log.js';
import { readOptions } from './lua-options.js';
import {
  JSON_NULL,
  LuaConversionError,
  luaToHostValue,
  luaToJson,
  markJsonArray,
  pushBytesNoCopy,
  pushJson,
  pushString,
  viewBytes,
} from './lua-values.js';
import type { CapabilityOptions } from './resolved-source-options.js';
import { capString, capText } from './text-cap.js';
import { openInWorkspace } from './workspace-files.js';
import type { Denylist } from './workspace-paths.js';

const { lua, lauxlib } = fengari;

/** What host functions need to know about the call that is running right now. */
export interface HostCall extends HostCallInfo {
  log(level: LuaLogLevel, message: string): void;
  /** Report progress to the host (`ToolContext.update`); a no-op when the host gave no callback. */
  update(update: ToolUpdate): void;
}

export interface HostApiOptions {
  /** The running call. Host functions run synchronously inside a resume, so this is always the caller's call. */
  current: () => HostCall;
  denylist: Denylist;
  budgets: ResolvedBudgets;
  invoker?: HostInvoker | undefined;
  options: CapabilityOptions;
}

const decoder = new TextDecoder();

/** The `panto` table's functions: `always` present, and one per capability (host functions included). */
export interface HostFunctions {
  always: Record<string, LuaJsFunction>;
  capabilities: Record<string, LuaJsFunction>;
}

/** The `panto` table's functions. */
export function createHostFunctions(opts: HostApiOptions): HostFunctions {
  const { current, denylist, budgets, invoker } = opts;

  /** `panto.read_file(path [, {offset, length}])`: the bytes (a range with the options), or `nil, err`. */
  const readFileFn: LuaJsFunction = (L) => {
    const p = checkPath(L, 'panto.read_file');
    const o = readOptions(L, 2, 'panto.read_file', { offset: 'number', length: 'number' });
    const offset = optionalCount(L, 'panto.read_file', 'offset', o.offset, 0);
    const length = optionalCount(L, 'panto.read_file', 'length', o.length, 1);
    const range = offset === undefined && length === undefined ? undefined : { offset, length };
    const work = readWorkspaceFile(current().root, p, denylist, budgets.maxReadBytes, range).then(
      (r): Pusher => {
        if (!r.ok) return failure(r.error);
        // Memory nobody else shares (see readRange): handed to Lua without a copy.
        return (T) => {
          pushBytesNoCopy(T, r.value);
          return 1;
        };
      },
    );
    return yieldFor(L, 'panto.read_file', work);
  };

  /** `panto.stat(path)`: `{type, size, mtime, mode}` or `nil, err`. */
  const statFn: LuaJsFunction = (L) => {
    const p = checkPath(L, 'panto.stat');
    const work = statWorkspace(current().root, p, denylist).then(valueOrFailure);
    return yieldFor(L, 'panto.stat', work);
  };

  /** `panto.list_dir([path [, {details = true}]])`: the entries sorted by name, or `nil, err`. */
  const listDirFn: LuaJsFunction = (L) => {
    const p = lua.lua_type(L, 1) <= lua.LUA_TNIL ? '.' : checkPath(L, 'panto.list_dir');
    const o = readOptions(L, 2, 'panto.list_dir', { details: 'boolean' });
    const work = listWorkspaceDir(current().root, p, denylist, o.details === true).then(valueOrFailure);
    return yieldFor(L, 'panto.list_dir', work);
  };

  /** `panto.write_file(path, data [, {append = true}])`: `true` or `nil, err`. */
  const writeFileFn: LuaJsFunction = (L) => {
    const p = checkPath(L, 'panto.write_file');
    if (lua.lua_type(L, 2) !== lua.LUA_TSTRING)
      return lauxlib.luaL_error(L, 'panto.write_file: data must be a string');
    const data = viewBytes(L, 2) ?? Buffer.alloc(0);
    const o = readOptions(L, 3, 'panto.write_file', { append: 'boolean' });
    const work = writeWorkspaceFile(
      current().root,
      p,
      denylist,
      data,
      budgets.maxWriteBytes,
      o.append === true,
    ).then(valueOrFailure);
    return yieldFor(L, 'panto.write_file', work);
  };

  /** `panto.make_dir(path)`: `true` (also when it exists) or `nil, err`. */
  const makeDirFn: LuaJsFunction = (L) => {
    const p = checkPath(L, 'panto.make_dir');
    return yieldFor(L, 'panto.make_dir', makeWorkspaceDir(current().root, p, denylist).then(valueOrFailure));
  };

  const execOptions = opts.options.exec ?? {};
  /** `panto.exec(argv [, {cwd, stdin, env, timeout_ms, shell}])`: `{code, signal, stdout, stderr, truncated, timed_out}`. */
  const execFn: LuaJsFunction = (L) => {
    const o = readOptions(L, 2, 'panto.exec', {
      cwd: 'string',
      stdin: 'bytes',
      env: 'string-map',
      timeout_ms: 'number',
      shell: 'boolean',
    });
    const shell = o.shell === true;
    let argv: string[] | string;
    if (shell) {
      if (lua.lua_type(L, 1) !== lua.LUA_TSTRING) {
        return lauxlib.luaL_error(L, 'panto.exec: with shell = true, the command is one string');
      }
      argv = decoder.decode(lua.lua_tolstring(L, 1) ?? new Uint8Array(0));
      if (argv.length === 0) return lauxlib.luaL_error(L, 'panto.exec: the command is empty');
    } else {
      const list =
        lua.lua_type(L, 1) === lua.LUA_TTABLE
          ? luaToJson(L, 1, 'argv', { maxStringBytes: 1024 * 1024 })
          : null;
      if (!Array.isArray(list) || list.length === 0 || list.some((a) => typeof a !== 'string')) {
        return lauxlib.luaL_error(
          L,
          'panto.exec: argv must be a non-empty list of strings, e.g. {"git", "status"} (a command line needs {shell = true})',
        );
      }
      argv = list as string[];
      if (argv.some((a) => a.includes('\0')))
        return lauxlib.luaL_error(L, 'panto.exec: argv contains a NUL byte');
    }
    const timeoutMs =
      optionalCount(L, 'panto.exec', 'timeout_ms', o.timeout_ms, 1) ??
      execOptions.timeoutMs ??
      DEFAULT_EXEC_TIMEOUT_MS;
    const call = current();
    const signal = call.signal;
    const stdin = o.stdin as Buffer | undefined;
    const work = (async (): Promise<Pusher> => {
      let cwd = call.root;
      if (typeof o.cwd === 'string') {
        const dir = await openInWorkspace(call.root, o.cwd, denylist, 'dir');
        if (!dir.ok) return failure(`exec: cwd ${dir.error}`);
        await dir.fh?.close().catch(() => {});
        cwd = dir.abs;
      }
      const r = await runCommand({
        argv,
        shell,
        cwd,
        stdin,
        env: commandEnv(execOptions, (o.env as Record<string, string> | undefined) ?? {}),
        timeoutMs,
        maxOutputBytes: execOptions.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
        signal,
      });
      return r.ok ? pushOwned(r.value) : failure(r.error);
    })();
    return yieldFor(L, 'panto.exec', work);
  };

  const fetchOptions = opts.options.fetch ?? {};
  const rules = new AddressRules(fetchOptions);
  /** `panto.fetch(url [, {method, headers, body, timeout_ms, max_bytes}])`: `{status, headers, body, url, truncated}`. */
  const fetchFn: LuaJsFunction = (L) => {
    if (lua.lua_type(L, 1) !== lua.LUA_TSTRING)
      return lauxlib.luaL_error(L, 'panto.fetch: url must be a string');
    const url = decoder.decode(lua.lua_tolstring(L, 1) ?? new Uint8Array(0));
    const o = readOptions(L, 2, 'panto.fetch', {
      method: 'string',
      headers: 'string-map',
      body: 'bytes',
      timeout_ms: 'number',
      max_bytes: 'number',
    });
    const method = (o.method as string | undefined) ?? (o.body === undefined ? 'GET' : 'POST');
    if (!/^[A-Za-z]{1,20}$/.test(method))
      return lauxlib.luaL_error(L, 'panto.fetch: method must be a word like GET');
    const timeoutMs =
      optionalCount(L, 'panto.fetch', 'timeout_ms', o.timeout_ms, 1) ??
      fetchOptions.timeoutMs ??
      DEFAULT_FETCH_TIMEOUT_MS;
    const hostMax = fetchOptions.maxBytes ?? DEFAULT_FETCH_MAX_BYTES;
    const maxBytes = Math.min(
      optionalCount(L, 'panto.fetch', 'max_bytes', o.max_bytes, 0) ?? hostMax,
      hostMax,
    );
    const work = fetchUrl({
      url,
      method,
      headers: (o.headers as Record<string, string> | undefined) ?? {},
      body: o.body as Buffer | undefined,
      timeoutMs,
      maxBytes,
      rules,
      signal: current().signal,
    }).then((r) => (r.ok ? pushOwned(r.value) : failure(r.error)));
    return yieldFor(L, 'panto.fetch', work);
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
      if (text === undefined) throw new LuaConversionError('value has no JSON form');
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
      pushJson(L, value, 'json');
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
    current().log('info', joinArgs(L, budgets.maxTextBytes));
    return 0;
  };

  /** `panto.progress(message [, fraction])`: progress for the host (never sent to a model). */
  const progressFn: LuaJsFunction = (L) => {
    const message = capText(lauxlib.luaL_checklstring(L, 1), budgets.maxTextBytes, 'progress message');
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
    always: {
      sniff: sniffFn,
      json_encode: jsonEncodeFn,
      json_decode: jsonDecodeFn,
      log: logFn,
      progress: progressFn,
    },
    capabilities: {
      read_file: readFileFn,
      stat: statFn,
      list_dir: listDirFn,
      write_file: writeFileFn,
      make_dir: makeDirFn,
      exec: execFn,
      fetch: fetchFn,
      ...(invoker === undefined ? {} : hostFunctionBridges(invoker, current, budgets)),
    },
  };
}

/** A host function's outcome for Lua: its value (bytes without a second copy) or `nil, message` (capped). */
function pushOutcome(outcome: HostOutcome, maxText: number): Pusher {
  if (!outcome.ok) return failure(capString(outcome.error, maxText, 'message'));
  const value = outcome.value;
  return (T) => {
    pushJson(T, value, 'json', 0, true);
    return 1;
  };
}

/**
 * `panto.<name>(value)` for each host function: converts the one argument (strings that are not UTF-8 as bytes), lets
 * the invoker run the function, and pushes its result (`panto.json.null` for `null`) or `nil, message` — at once when
 * the answer is there, else after yielding until it is.
 */
function hostFunctionBridges(
  invoker: HostInvoker,
  current: () => HostCall,
  budgets: ResolvedBudgets,
): Record<string, LuaJsFunction> {
  const out: Record<string, LuaJsFunction> = {};
  for (const name of invoker.names) {
    const what = `panto.${name}`;
    out[name] = (L) => {
      const n = lua.lua_gettop(L);
      if (n > 1) return lauxlib.luaL_error(L, `${what} takes one argument (a table), got ${n}`);
      let args: HostValue;
      try {
        args = luaToHostValue(L, 1, 'args');
      } catch (err) {
        if (!(err instanceof LuaConversionError)) throw err;
        return lauxlib.luaL_error(L, `${what}: ${err.message}`);
      }
      const answer = invoker.invoke(name, args, current());
      // Answered at once (a synchronous host function): no yield, the result is pushed right here (under the meter).
      if (!(answer instanceof Promise)) return pushOutcome(answer, budgets.maxTextBytes)(L);
      return yieldFor(
        L,
        what,
        answer.then((outcome) => pushOutcome(outcome, budgets.maxTextBytes)),
      );
    };
  }
  return out;
}

/** Build `panto.json` = `{ null, array, encode, decode }` on top of `L`'s stack from the always-present functions. */
export function pushJsonTable(L: LuaState, fns: HostFunctions): void {
  lua.lua_createtable(L, 0, 4);
  lua.lua_pushlightuserdata(L, JSON_NULL);
  lua.lua_setfield(L, -2, 'null');
  const encode = fns.always.json_encode;
  const decode = fns.always.json_decode;
  if (encode) {
    lua.lua_pushjsfunction(L, encode);
    lua.lua_setfield(L, -2, 'encode');
  }
  if (decode) {
    lua.lua_pushjsfunction(L, decode);
    lua.lua_setfield(L, -2, 'decode');
  }
  lua.lua_pushjsfunction(L, jsonArray);
  lua.lua_setfield(L, -2, 'array');
}

const jsonArray: LuaJsFunction = (L) => {
  if (lua.lua_type(L, 1) <= lua.LUA_TNIL) lua.lua_newtable(L);
  else lauxlib.luaL_checktype(L, 1, lua.LUA_TTABLE);
  lua.lua_settop(L, 1);
  markJsonArray(L);
  return 1;
};

/**
 * `print`/`panto.log` arguments as one tab-separated line of at most `max` bytes (each through `tostring`; this runs
 * inside the call, so a raising or looping `__tostring` is an error or a budget overrun of the call itself).
 */
export function joinArgs(L: LuaState, max: number): string {
  const n = lua.lua_gettop(L);
  const chunks: Uint8Array[] = [];
  let total = 0;
  let kept = 0;
  const add = (bytes: Uint8Array) => {
    total += bytes.byteLength;
    if (kept <= max) {
      const piece = bytes.subarray(0, max + 4 - kept);
      chunks.push(piece);
      kept += piece.byteLength;
    }
  };
  for (let i = 1; i <= n; i++) {
    if (i > 1) add(TAB);
    if (lua.lua_type(L, i) === lua.LUA_TLIGHTUSERDATA && lua.lua_touserdata(L, i) === JSON_NULL)
      add(JSON_NULL_TEXT);
    else {
      add(lauxlib.luaL_tolstring(L, i));
      lua.lua_pop(L, 1);
    }
  }
  return capText(Buffer.concat(chunks), max, 'log line', total);
}

const TAB = new Uint8Array([9]);
const JSON_NULL_TEXT = new TextEncoder().encode('json.null');
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

/**
 * A Pusher for a record whose `Buffer`s own their memory (exec output, a fetched body): they become Lua strings
 * without a copy; a `null` member is left out (`nil`).
 */
function pushOwned(value: object): Pusher {
  return (L) => {
    pushJson(L, value, 'args', 0, true);
    return 1;
  };
}

/** The value of a successful result, or `nil, err`. */
function valueOrFailure(r: { ok: true; value: unknown } | { ok: false; error: string }): Pusher {
  return r.ok ? pushOne(r.value) : failure(r.error);
}

/** An optional whole-number option at least `min`, or a Lua error. */
function optionalCount(L: LuaState, fn: string, key: string, v: unknown, min: number): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > Number.MAX_SAFE_INTEGER) {
    return lauxlib.luaL_error(L, `${fn}: option '${key}' must be a whole number >= ${min}`);
  }
  return v;
}
