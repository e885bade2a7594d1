/**
 * The Lua runtime: one fengari state, a sandbox env per tool file, and a scheduler that runs each call in its own
 * Lua thread (coroutine).
 *
 * Scheduling: `lua_resume` runs a thread until it finishes or yields. A yield is either a host call (the thread
 * yielded `HOST_YIELD` + a promise: await it, push the answer, resume), a time slice (the budget hook yielded after
 * `sliceMs` of Lua time: give the event loop a turn with `setImmediate`, resume) or a user's top-level
 * `coroutine.yield` (an error). Many calls interleave; only one Lua thread runs at any instant, so "the current
 * call" is always well defined while Lua code (or a host function) runs.
 *
 * Budgets: a count hook on every call thread (inherited by coroutines the tool creates) adds up instructions and
 * checks the wall clock; on overrun it raises an error and re-arms itself to fire on EVERY instruction, so a `pcall`
 * that catches the error cannot keep the call alive. The wall clock also bounds time spent awaiting host calls.
 */

import type { LuaHook, LuaState } from 'fengari';
import fengari from 'fengari';
import type { ToolUpdate } from '../tool.js';
import type { CallResult } from '../tool-source.js';
import type { ResolvedBudgets } from './budget.js';
import { HOOK_INTERVAL } from './budget.js';
import { setPatternWatch } from './fengari-fixes.js';
import { createHostFunctions, type HostCall } from './host-api.js';
import { HOST_YIELD, type Pusher, sliceYields } from './host-yield.js';
import type { LuaLogEntry, LuaLogger } from './lua-log.js';
import { LuaConversionError, luaToJson, pushJson, pushString, toText, typeName } from './lua-values.js';
import { readHandlerResult } from './result-bridge.js';
import { Sandbox } from './sandbox.js';
import type { Denylist } from './workspace-paths.js';

const { lua, lauxlib, to_luastring } = fengari;
const K_TOOL_CALL_ID = to_luastring('tool_call_id');
const K_TOOL_NAME = to_luastring('tool_name');

/** A tool file that loaded. */
export interface LoadedLuaTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  file: string;
  handlerRef: number;
}

/** Why a tool file did not load. `line` is set when the error has a position. */
export interface LuaLoadError {
  file: string;
  line?: number;
  message: string;
}

export interface LuaRuntimeOptions {
  budgets: ResolvedBudgets;
  denylist: Denylist;
  log: LuaLogger;
}

/** What a call needs besides args. */
export interface RunContext {
  toolCallId: string;
  /** Real path of the workspace root. */
  root: string;
  signal?: AbortSignal;
  /** The dispatcher's progress callback (`ToolContext.update`), reached from Lua through `panto.progress`. */
  update?: ((update: ToolUpdate) => void) | undefined;
}

interface CallState {
  readonly thread: LuaState;
  readonly threadRef: number;
  readonly tool: string;
  readonly file: string;
  readonly toolCallId: string;
  readonly root: string;
  readonly update: ((update: ToolUpdate) => void) | undefined;
  readonly deadline: number;
  readonly hook: LuaHook;
  instructions: number;
  sliceStart: number;
  /** Set once a budget is exceeded: the reason, reported instead of whatever error unwinds the thread. */
  exceeded: string | null;
}

type Outcome = { ok: true; nresults: number } | { ok: false; error: string };

/** Thrown (as a JS error) from inside fengari to abort a pattern match; converted to a Lua error. */
class BudgetExceeded extends Error {}

const NAME_RE = /^[a-zA-Z0-9_-]{1,64}$/;
const POSITION_RE = /^([^\n:]+):(\d+): ([\s\S]*)$/;

export class LuaRuntime {
  readonly #L: LuaState;
  readonly #sandbox: Sandbox;
  readonly #budgets: ResolvedBudgets;
  readonly #log: LuaLogger;
  #active: CallState | null = null;
  #loadingFile: string | undefined;

  constructor(opts: LuaRuntimeOptions) {
    this.#budgets = opts.budgets;
    this.#log = opts.log;
    const L = lauxlib.luaL_newstate();
    this.#L = L;
    lua.lua_atnativeerror(L, (T) => {
      const e = lua.lua_touserdata(T, -1);
      let message: string;
      if (e instanceof BudgetExceeded) message = e.message;
      else if (e instanceof RangeError && /call stack/i.test(e.message)) {
        message =
          'stack overflow (JavaScript call stack exhausted: recursion through pcall, metamethods or callbacks)';
      } else {
        message = `internal error in the Lua host: ${e instanceof Error ? e.message : String(e)}`;
        this.#log({
          level: 'error',
          message: `${message}\n${e instanceof Error ? (e.stack ?? '') : ''}`,
          ...this.#attribution(),
        });
      }
      pushString(T, message);
      return 1;
    });
    const current = (): HostCall => {
      const call = this.#active;
      if (call === null) throw new Error('panto.* called outside a tool call');
      return {
        root: call.root,
        log: (level, message) => this.#log({ level, message, ...this.#attribution() }),
        update: (update) => call.update?.(update),
      };
    };
    this.#sandbox = new Sandbox(L, {
      budgets: opts.budgets,
      print: (line) => this.#log({ level: 'info', message: line, ...this.#attribution() }),
      hostFunctions: createHostFunctions({ current, denylist: opts.denylist, budgets: opts.budgets }),
      currentCall: () => this.#active,
    });
  }

  /** Who is running right now, for log entries. */
  #attribution(): Pick<LuaLogEntry, 'tool' | 'toolCallId' | 'file'> {
    const c = this.#active;
    if (c === null) return this.#loadingFile === undefined ? {} : { file: this.#loadingFile };
    return c.tool === '' ? { file: c.file } : { tool: c.tool, toolCallId: c.toolCallId, file: c.file };
  }

  /**
   * Compile and run one tool file (text only) in a fresh sandbox env; validate the table it returns.
   * `chunkname` is what error positions show (e.g. `read.lua`). Never throws for a broken file.
   */
  async loadTool(
    file: string,
    chunkname: string,
    source: Uint8Array,
    root: string,
  ): Promise<{ ok: true; tool: LoadedLuaTool } | { ok: false; error: LuaLoadError }> {
    const L = this.#L;
    const top = lua.lua_gettop(L);
    const fail = (message: string, line?: number): { ok: false; error: LuaLoadError } => {
      lua.lua_settop(L, top);
      return { ok: false, error: line === undefined ? { file, message } : { file, line, message } };
    };
    const status = lauxlib.luaL_loadbufferx(L, source, source.length, `@${chunkname}`, 't');
    if (status !== lua.LUA_OK) {
      const msg = toText(L, -1) ?? 'unknown load error';
      const m = POSITION_RE.exec(msg);
      return fail(msg, m ? Number(m[2]) : undefined);
    }
    this.#sandbox.pushEnv();
    lua.lua_setupvalue(L, -2, 1);
    const fnRef = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);

    const call = this.#newCall('', file, { toolCallId: '', root });
    lua.lua_rawgeti(call.thread, lua.LUA_REGISTRYINDEX, fnRef);
    lauxlib.luaL_unref(L, lua.LUA_REGISTRYINDEX, fnRef);
    this.#loadingFile = file;
    const outcome = await this.#drive(call, 0);
    this.#loadingFile = undefined;
    if (!outcome.ok) {
      this.#release(call);
      const m = POSITION_RE.exec(outcome.error) ?? /\((?:[^():]+):(\d+)\)$/.exec(outcome.error);
      const line = m ? Number(m.length === 4 ? m[2] : m[1]) : undefined;
      return fail(`${chunkname}: error while loading: ${outcome.error}`, line);
    }
    const T = call.thread;
    try {
      if (outcome.nresults < 1 || lua.lua_type(T, 1) !== lua.LUA_TTABLE) {
        const got = outcome.nresults < 1 ? 'nothing' : `a ${typeName(T, lua.lua_type(T, 1))}`;
        return fail(
          `${chunkname}: a tool file must return a table {name, description, parameters, handler}; it returned ${got}`,
        );
      }
      lua.lua_getfield(T, 1, 'name');
      const name = toText(T, -1);
      lua.lua_getfield(T, 1, 'description');
      const description = toText(T, -1);
      lua.lua_getfield(T, 1, 'handler');
      const handlerType = lua.lua_type(T, -1);
      lua.lua_getfield(T, 1, 'parameters');
      const paramsType = lua.lua_type(T, -1);
      if (name === null || !NAME_RE.test(name)) {
        return fail(`${chunkname}: 'name' must be a string matching ^[a-zA-Z0-9_-]{1,64}$`);
      }
      if (description === null) return fail(`${chunkname}: tool '${name}' has no 'description' string`);
      if (handlerType !== lua.LUA_TFUNCTION) {
        return fail(
          `${chunkname}: tool '${name}' has no 'handler' function (got ${typeName(T, handlerType)})`,
        );
      }
      let parameters: Record<string, unknown> = { type: 'object', properties: {} };
      if (paramsType === lua.LUA_TTABLE) {
        const value = luaToJson(T, lua.lua_gettop(T), 'parameters');
        if (Array.isArray(value) || value === null || typeof value !== 'object') {
          return fail(`${chunkname}: tool '${name}': 'parameters' must be a JSON Schema object`);
        }
        parameters = value;
        if (parameters.type === undefined) parameters = { type: 'object', ...parameters };
        if (parameters.type !== 'object') {
          return fail(`${chunkname}: tool '${name}': 'parameters' must describe an object (type = "object")`);
        }
      } else if (paramsType !== lua.LUA_TNIL) {
        return fail(
          `${chunkname}: tool '${name}': 'parameters' must be a table, got ${typeName(T, paramsType)}`,
        );
      }
      lua.lua_pop(T, 1);
      lua.lua_xmove(T, L, 1);
      const handlerRef = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
      lua.lua_settop(L, top);
      return { ok: true, tool: { name, description, parameters, file, handlerRef } };
    } catch (err) {
      if (err instanceof LuaConversionError) return fail(`${chunkname}: ${err.message}`);
      throw err;
    } finally {
      this.#release(call);
    }
  }

  /** Run a tool's handler with `args` and read its result. Never rejects for the tool's own failure. */
  async call(tool: LoadedLuaTool, args: Record<string, unknown>, ctx: RunContext): Promise<CallResult> {
    if (ctx.signal?.aborted) return { ok: false, error: 'aborted before the tool started' };
    const call = this.#newCall(tool.name, tool.file, ctx);
    const T = call.thread;
    try {
      lua.lua_rawgeti(T, lua.LUA_REGISTRYINDEX, tool.handlerRef);
      pushJson(T, args);
      lua.lua_createtable(T, 0, 2);
      pushString(T, ctx.toolCallId);
      lua.lua_setfield(T, -2, K_TOOL_CALL_ID);
      pushString(T, tool.name);
      lua.lua_setfield(T, -2, K_TOOL_NAME);
      const outcome = await this.#drive(call, 2, ctx.signal);
      if (!outcome.ok) return { ok: false, error: outcome.error };
      const res = readHandlerResult(T, 1, outcome.nresults, this.#budgets);
      if (!res.ok) return { ok: false, error: res.error };
      return res.meta === undefined
        ? { ok: true, parts: res.parts }
        : { ok: true, parts: res.parts, meta: res.meta };
    } catch (err) {
      // A fault on the host side (e.g. arguments nested too deep to convert): an error result, never a rejection.
      const message = err instanceof Error ? err.message : String(err);
      this.#log({
        level: 'error',
        message: `tool '${tool.name}' failed in the host: ${message}`,
        tool: tool.name,
      });
      return { ok: false, error: `internal error in the Lua host: ${message}` };
    } finally {
      this.#release(call);
    }
  }

  #newCall(tool: string, file: string, ctx: RunContext): CallState {
    const L = this.#L;
    const thread = lua.lua_newthread(L);
    const threadRef = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
    const budgets = this.#budgets;
    const now = performance.now();
    const call: CallState = {
      thread,
      threadRef,
      tool,
      file,
      toolCallId: ctx.toolCallId,
      root: ctx.root,
      update: ctx.update,
      deadline: now + budgets.wallClockMs,
      instructions: 0,
      sliceStart: now,
      exceeded: null,
      hook: (T) => {
        if (call.exceeded !== null) raiseFromHook(T, call.exceeded);
        call.instructions += HOOK_INTERVAL;
        if (call.instructions > budgets.instructions) {
          this.#exceed(call, T, `instruction budget exceeded (${budgets.instructions} Lua instructions)`);
        }
        const t = performance.now();
        if (t > call.deadline)
          this.#exceed(call, T, `wall-clock budget exceeded (${budgets.wallClockMs} ms)`);
        if (t - call.sliceStart > budgets.sliceMs && lua.lua_isyieldable(T)) {
          sliceYields.add(T);
          lua.lua_yield(T, 0);
        }
      },
    };
    lua.lua_sethook(thread, call.hook, lua.LUA_MASKCOUNT, HOOK_INTERVAL);
    this.#sandbox.claimThread(thread, call);
    return call;
  }

  #exceed(call: CallState, T: LuaState, reason: string): never {
    call.exceeded = reason;
    // From now on the hook fires on every instruction of every thread of this call, until it has unwound.
    lua.lua_sethook(T, call.hook, lua.LUA_MASKCOUNT, 1);
    lua.lua_sethook(call.thread, call.hook, lua.LUA_MASKCOUNT, 1);
    return raiseFromHook(T, reason);
  }

  #release(call: CallState): void {
    lua.lua_sethook(call.thread, null, 0, 0);
    lauxlib.luaL_unref(this.#L, lua.LUA_REGISTRYINDEX, call.threadRef);
  }

  /** Run `call.thread` (function + `nargs` arguments on its stack) to completion. */
  async #drive(call: CallState, nargs: number, signal?: AbortSignal): Promise<Outcome> {
    const T = call.thread;
    let n = nargs;
    for (;;) {
      call.sliceStart = performance.now();
      this.#active = call;
      setPatternWatch(() => {
        if (performance.now() > call.deadline) {
          call.exceeded ??= `wall-clock budget exceeded (${this.#budgets.wallClockMs} ms, inside a pattern match)`;
          throw new BudgetExceeded(call.exceeded);
        }
      });
      let status: number;
      try {
        status = lua.lua_resume(T, null, n);
      } finally {
        this.#active = null;
        setPatternWatch(null);
      }
      if (status === lua.LUA_OK) return { ok: true, nresults: lua.lua_gettop(T) };
      if (status !== lua.LUA_YIELD) return { ok: false, error: this.#errorOf(call, status) };

      if (sliceYields.delete(T)) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        const stop = this.#stopReason(call, signal);
        if (stop !== null) return { ok: false, error: stop };
        n = 0;
        continue;
      }
      const nres = lua.lua_gettop(T);
      if (nres === 2 && lua.lua_touserdata(T, 1) === HOST_YIELD) {
        const pending = lua.lua_touserdata(T, 2) as Promise<Pusher>;
        lua.lua_pop(T, 2);
        const pusher = await this.#await(call, pending, signal);
        if (typeof pusher === 'string') return { ok: false, error: pusher };
        const stop = this.#stopReason(call, signal);
        if (stop !== null) return { ok: false, error: stop };
        try {
          n = pusher(T);
        } catch (err) {
          return { ok: false, error: `internal error in the Lua host: ${(err as Error).message}` };
        }
        continue;
      }
      return {
        ok: false,
        error:
          'coroutine.yield called outside a coroutine (the handler itself cannot yield; use coroutine.wrap)',
      };
    }
  }

  /** Await a host promise, bounded by the call's deadline and the abort signal. A string is the stop reason. */
  #await(call: CallState, pending: Promise<Pusher>, signal?: AbortSignal): Promise<Pusher | string> {
    const remaining = call.deadline - performance.now();
    if (remaining <= 0)
      return Promise.resolve(`wall-clock budget exceeded (${this.#budgets.wallClockMs} ms)`);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        cleanup();
        resolve(`wall-clock budget exceeded (${this.#budgets.wallClockMs} ms, waiting for a host call)`);
      }, remaining);
      const onAbort = () => {
        cleanup();
        resolve('aborted');
      };
      const cleanup = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      pending.then((p) => {
        cleanup();
        resolve(p);
      });
    });
  }

  #stopReason(call: CallState, signal?: AbortSignal): string | null {
    if (signal?.aborted) return 'aborted';
    if (performance.now() > call.deadline)
      return `wall-clock budget exceeded (${this.#budgets.wallClockMs} ms)`;
    return null;
  }

  /** The tool error for a failed thread: `message (file:line)`; the traceback goes to the host log. */
  #errorOf(call: CallState, status: number): string {
    const T = call.thread;
    const L = this.#L;
    let raw: string;
    const et = lua.lua_type(T, -1);
    if (et === lua.LUA_TSTRING) raw = toText(T, -1) ?? '';
    else if (et === lua.LUA_TTABLE || et === lua.LUA_TUSERDATA) {
      // error({...}): use __tostring when there is one, else name the type.
      try {
        const v = luaToJson(T, lua.lua_gettop(T), 'error');
        raw = `error object: ${JSON.stringify(v)}`;
      } catch {
        raw = `error object is a ${typeName(T, et)} value`;
      }
    } else if (et === lua.LUA_TNIL) raw = 'error called with nil';
    else
      raw = `error object is a ${typeName(T, et)} value (${decoder.decode(lauxlib.luaL_tolstring(T, -1))})`;
    if (status === lua.LUA_ERRMEM) raw = `out of memory: ${raw}`;
    if (status === lua.LUA_ERRERR) raw = `error in error handling: ${raw}`;
    let message = raw;
    const m = POSITION_RE.exec(raw);
    if (m) message = `${m[3]} (${m[1]}:${m[2]})`;
    if (call.exceeded !== null) message = call.exceeded;
    lauxlib.luaL_traceback(L, T, raw, 0);
    const traceback = toText(L, -1) ?? raw;
    lua.lua_pop(L, 1);
    this.#log({
      level: 'error',
      message:
        call.tool === ''
          ? `loading ${call.file} failed: ${message}`
          : `tool '${call.tool}' failed: ${message}`,
      traceback,
      file: call.file,
      ...(call.tool === '' ? {} : { tool: call.tool, toolCallId: call.toolCallId }),
    });
    return message;
  }
}

const decoder = new TextDecoder();

/**
 * Raise a Lua error from inside the count hook. fengari (like Lua) runs a hook with `allowhook = 0` and sets it back
 * only when the hook RETURNS; an error skips that, so an `xpcall` message handler would run with hooks off and a
 * `while true do end` in it would never stop. Re-enable hooks first, so the handler is budgeted too (a handler that
 * keeps failing ends in Lua's "error in error handling").
 */
function raiseFromHook(T: LuaState, message: string): never {
  T.allowhook = 1;
  return lauxlib.luaL_error(T, message);
}
