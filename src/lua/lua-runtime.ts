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
import type { ToolAnnotations, ToolIcon, ToolUpdate } from '../tool.js';
import type { CallResult } from '../tool-source.js';
import { AbortFanout } from './abort-fanout.js';
import type { ResolvedBudgets } from './budget.js';
import { HOOK_INTERVAL } from './budget.js';
import {
  installNativeErrorRoom,
  type Meter,
  setMeter,
  setPatternWatch,
  withoutMeter,
} from './fengari-fixes.js';
import { createHostFunctions, type HostCall } from './host-api.js';
import type { HostInvoker } from './host-functions.js';
import { HOST_YIELD, type Pusher, sliceYields } from './host-yield.js';
import type { LuaLogEntry, LuaLogger } from './lua-log.js';
import { ModuleLoader } from './lua-modules.js';
import {
  LuaConversionError,
  luaToJson,
  pushBytesNoCopy,
  pushJson,
  pushString,
  typeName,
} from './lua-values.js';
import type { CapabilityOptions } from './resolved-source-options.js';
import { readHandlerResult } from './result-bridge.js';
import { Sandbox } from './sandbox.js';
import { normalizeSchema } from './schema-arrays.js';
import { schemaProblem } from './schema-check.js';
import {
  beginSlice,
  currentBurstStart,
  enterVm,
  leaveVm,
  mayRunNow,
  nextTurn,
  vmBusy,
} from './slice-scheduler.js';
import { capString, capText } from './text-cap.js';
import { readDeclExtras } from './tool-decl-extras.js';
import type { Denylist } from './workspace-paths.js';

/** The words of the load error of a tool declaring a capability the host does not grant. */
export const NOT_GRANTED = 'the host does not grant';

const { lua, lauxlib, to_luastring } = fengari;
const K_TOOL_CALL_ID = to_luastring('tool_call_id');
const K_TOOL_NAME = to_luastring('tool_name');

/** A tool file that loaded. */
export interface LoadedLuaTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  /** `output_schema`: the JSON Schema of its `structured` result (an object schema). */
  outputSchema?: Record<string, unknown>;
  /** `read_only`, `destructive`, `idempotent`, `open_world`, as the file declared them. */
  annotations?: ToolAnnotations;
  /** `icons`, checked (`checkToolIcons`). */
  icons?: ToolIcon[];
  file: string;
  handlerRef: number;
  /** The host capabilities the file declared (and the host granted), host functions included. */
  capabilities: readonly string[];
  capabilitySet: ReadonlySet<string>;
  /** `name` as a Lua string (for `ctx.tool_name`, pushed on every call). */
  nameBytes: Uint8Array;
  /** The file's `needs_approval` (undefined when it does not say). */
  needsApproval: boolean | undefined;
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
  /**
   * Host capabilities a tool file may declare (`capabilities = {...}`), host functions included; a file asking for
   * more does not load.
   */
  grant: readonly string[];
  /** Every name a tool file may declare (known but not granted is a different load error than unknown). */
  known: readonly string[];
  /** The host's own functions (`hostFunctions`), or how a worker reaches them. */
  hostFunctions?: HostInvoker | undefined;
  /** Settings of the standard capabilities (exec, fetch, write_file). */
  capabilityOptions?: CapabilityOptions | undefined;
  /** The package's own `lua/lib` (shared modules of the built-ins, searched last by `require`). */
  builtinLib: string;
  /** Calls that run at once; more wait in a FIFO queue (their time budget does not run while they wait). */
  maxConcurrentCalls: number;
}

/** What a call needs besides args. */
export interface RunContext {
  toolCallId: string;
  /** Real path of the workspace root. */
  root: string;
  signal?: AbortSignal;
  /** The dispatcher's progress callback (`ToolContext.update`), reached from Lua through `panto.progress`. */
  update?: ((update: ToolUpdate) => void) | undefined;
  /** An opaque id the host-function invoker receives (the worker's id of the parent's call). */
  tag?: number | undefined;
}

interface CallState {
  readonly thread: LuaState;
  readonly threadRef: number;
  readonly tool: string;
  readonly file: string;
  readonly toolCallId: string;
  readonly root: string;
  readonly update: ((update: ToolUpdate) => void) | undefined;
  /** The capabilities of the tool being called (a `require`d module's `panto` uses them). */
  readonly capabilities: ReadonlySet<string>;
  readonly signal: AbortSignal | undefined;
  readonly tag: number | undefined;
  /** Aborted when the call ends, is aborted or runs out of time: what host functions get as `ctx.signal`. */
  controller: AbortController | null;
  /** Stops forwarding `signal`'s abort to `controller`. */
  unwatch: (() => void) | null;
  /** The `HostCall` view of this call, made on first use. */
  host: HostCall | null;
  /** Modules this call is loading (`require`), outermost first. */
  readonly requiring: string[];
  readonly hook: LuaHook;
  readonly meter: Meter;
  instructions: number;
  /** The call's own time so far (ms): finished slices and waits for its own host calls. */
  ownMs: number;
  /** When the running slice (or host wait) began. */
  sliceStart: number;
  /** Bytes allocated by the call (fengari accounting). */
  allocated: number;
  /** Set once a budget is exceeded: the reason, reported instead of whatever error unwinds the thread. */
  exceeded: string | null;
}

type Outcome = { ok: true; nresults: number } | { ok: false; error: string };

/** Thrown (as a JS error) from inside fengari to stop a library function; converted to a Lua error. */
class BudgetExceeded extends Error {}

const NAME_RE = /^[a-zA-Z0-9_-]{1,64}$/;
/** `chunk:line: rest` — the position Lua puts in front of an error message. */
const POSITION_RE = /^([^\n:]{1,200}):(\d{1,9}): /;
const MIB = 1024 * 1024;
const NONE: ReadonlySet<string> = new Set();
/** Idle threads kept for reuse. */
const IDLE_THREADS = 16;

export class LuaRuntime {
  readonly #L: LuaState;
  readonly #sandbox: Sandbox;
  readonly #modules: ModuleLoader;
  readonly #budgets: ResolvedBudgets;
  readonly #log: LuaLogger;
  readonly #grant: ReadonlySet<string>;
  readonly #known: readonly string[];
  readonly #maxConcurrent: number;
  #running = 0;
  readonly #queue: Array<() => void> = [];
  /** One abort listener per signal for all the calls waiting on it (slots and host calls). */
  readonly #aborts = new AbortFanout();
  #active: CallState | null = null;
  /** Threads of calls that ended cleanly, for reuse (see `#release`). */
  readonly #idleThreads: Array<{ thread: LuaState; ref: number }> = [];
  #loadingFile: string | undefined;

  constructor(opts: LuaRuntimeOptions) {
    this.#budgets = opts.budgets;
    this.#log = opts.log;
    this.#grant = new Set(opts.grant);
    this.#known = opts.known;
    this.#maxConcurrent = opts.maxConcurrentCalls;
    const L = lauxlib.luaL_newstate();
    this.#L = L;
    installNativeErrorRoom();
    lua.lua_atnativeerror(L, (T) => {
      const e = lua.lua_touserdata(T, -1);
      let message: string;
      if (e instanceof BudgetExceeded) message = e.message;
      else if (e instanceof RangeError && /call stack/i.test(e.message)) {
        message =
          'stack overflow (JavaScript call stack exhausted: recursion through pcall, metamethods or callbacks)';
      } else {
        // A fault inside a fengari library function (e.g. os.time{year=1e9}): a Lua error the tool can pcall.
        const detail = e instanceof Error ? e.message : String(e);
        message = `a Lua library function failed: ${capString(detail, 1000)}`;
        this.#log({
          level: 'warn',
          message: `${message}\n${e instanceof Error ? (e.stack ?? '') : ''}`,
          ...this.#attribution(),
        });
      }
      // Must not throw (see withoutMeter): the memory budget is checked again at the tool's next allocation.
      withoutMeter(() => pushString(T, message));
      return 1;
    });
    const current = (): HostCall => {
      const call = this.#active;
      if (call === null) throw new Error('panto.* called outside a tool call');
      call.host ??= this.#hostCall(call);
      return call.host;
    };
    const hostFunctions = createHostFunctions({
      current,
      denylist: opts.denylist,
      budgets: opts.budgets,
      invoker: opts.hostFunctions,
      options: opts.capabilityOptions ?? {},
    });
    this.#sandbox = new Sandbox(L, {
      budgets: opts.budgets,
      print: (line) => this.#log({ level: 'info', message: line, ...this.#attribution() }),
      hostFunctions,
      capabilityNames: this.#known,
      currentCall: () => this.#active,
      currentCapabilities: () => this.#active?.capabilities ?? NONE,
    });
    this.#modules = new ModuleLoader(
      L,
      {
        current: () => this.#active,
        newModuleEnv: (dirs) => {
          this.#sandbox.pushEnv({
            dynamicPanto: true,
            pushRequire: (S) => this.#modules.pushRequire(S, dirs),
          });
          return lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
        },
        seal: (envRef) => this.#sandbox.seal(envRef),
        maxTextBytes: opts.budgets.maxTextBytes,
      },
      opts.builtinLib,
      this.#sandbox.pcall,
    );
  }

  /** The `HostCall` view of `call` (what `panto.*` functions see), made on first use. */
  #hostCall(call: CallState): HostCall {
    const runtime = this;
    return {
      root: call.root,
      tool: call.tool,
      toolCallId: call.toolCallId,
      tag: call.tag,
      get signal(): AbortSignal {
        if (call.controller === null) {
          const controller = new AbortController();
          call.controller = controller;
          call.unwatch = runtime.#aborts.watch(call.signal, () =>
            controller.abort(new Error('the tool call was aborted')),
          );
        }
        return call.controller.signal;
      },
      log: (level, message) => this.#log({ level, message, ...this.#attribution() }),
      update: (update) => call.update?.(update),
    };
  }

  /** Who is running right now, for log entries. */
  #attribution(): Pick<LuaLogEntry, 'tool' | 'toolCallId' | 'file'> {
    const c = this.#active;
    if (c === null) return this.#loadingFile === undefined ? {} : { file: this.#loadingFile };
    return c.tool === '' ? { file: c.file } : { tool: c.tool, toolCallId: c.toolCallId, file: c.file };
  }

  /**
   * Compile and run one tool file (text only) in a fresh sandbox env; validate the table it returns (one tool) or the
   * list of tool tables, reading them RAW (a metatable never runs). `chunkname` is what error positions show (e.g.
   * `read.lua`). A bad entry of a list is its own load error (`x.lua: tools[2]: ...`); the others load. Never
   * throws for a broken file.
   */
  async loadTool(
    file: string,
    chunkname: string,
    source: Uint8Array,
    root: string,
  ): Promise<{ tools: LoadedLuaTool[]; errors: LuaLoadError[] }> {
    const L = this.#L;
    const top = lua.lua_gettop(L);
    const max = this.#budgets.maxTextBytes;
    const error = (message: string, line = schemaErrorLine(source, message)): LuaLoadError => {
      const text = capString(message, max, 'message');
      return line === undefined ? { file, message: text } : { file, line, message: text };
    };
    const fail = (message: string, line?: number) => {
      lua.lua_settop(L, top);
      return { tools: [], errors: [error(message, line)] };
    };
    const call = this.#newCall('', file, { toolCallId: '', root });
    this.#loadingFile = file;
    try {
      // Compiling is budgeted too: a 16 MB chunk stops at the time or memory budget.
      let status: number;
      call.sliceStart = performance.now();
      setMeter(call.meter);
      try {
        status = lauxlib.luaL_loadbufferx(L, source, source.length, `@${chunkname}`, 't');
      } finally {
        setMeter(null);
        call.ownMs += performance.now() - call.sliceStart;
      }
      if (call.exceeded !== null) return fail(`${chunkname}: ${call.exceeded}`);
      if (status !== lua.LUA_OK) {
        const msg = capText(lua.lua_tolstring(L, -1) ?? new Uint8Array(0), max, 'message');
        const m = POSITION_RE.exec(msg);
        return fail(msg, m ? Number(m[2]) : undefined);
      }
      const dirs = this.#modules.dirsForTool(file);
      const pantoRef = this.#sandbox.pushEnv({ pushRequire: (S) => this.#modules.pushRequire(S, dirs) });
      const envRef = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
      lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, envRef);
      lua.lua_setupvalue(L, -2, 1);
      lua.lua_xmove(L, call.thread, 1);
      const outcome = await this.#drive(call, 0);
      if (!outcome.ok) {
        const m = /(?:\((?:[^():]+):(\d+)\)| at [^ :]+:(\d+))$/.exec(outcome.error);
        const line = m ? Number(m[1] ?? m[2]) : undefined;
        return fail(`${chunkname}: error while loading: ${outcome.error}`, line);
      }
      const T = call.thread;
      if (outcome.nresults < 1 || lua.lua_type(T, 1) !== lua.LUA_TTABLE) {
        const got = outcome.nresults < 1 ? 'nothing' : `a ${typeName(T, lua.lua_type(T, 1))}`;
        return fail(
          `${chunkname}: a tool file must return a table {name, description, parameters, handler} (or a list of them); it returned ${got}`,
        );
      }
      lua.lua_settop(T, 1);
      rawField(T, 1, 'name');
      const isList = lua.lua_type(T, -1) === lua.LUA_TNIL && lua.lua_rawlen(T, 1) > 0;
      lua.lua_pop(T, 1);
      const tools: LoadedLuaTool[] = [];
      const errors: LuaLoadError[] = [];
      if (isList) {
        const n = lua.lua_rawlen(T, 1);
        for (let i = 1; i <= n; i++) {
          lua.lua_rawgeti(T, 1, i);
          const where = `${chunkname}: tools[${i}]`;
          const r =
            lua.lua_type(T, -1) === lua.LUA_TTABLE
              ? this.#readTool(T, lua.lua_gettop(T), where, file)
              : `${where} must be a tool table, got ${typeName(T, lua.lua_type(T, -1))}`;
          if (typeof r === 'string') errors.push(error(r));
          else tools.push(r);
          lua.lua_settop(T, 1);
        }
        // One env for all the file's tools: its panto answers with the capabilities of the tool being called.
        this.#sandbox.makeDynamic(pantoRef);
      } else {
        const r = this.#readTool(T, 1, chunkname, file);
        if (typeof r === 'string') {
          lauxlib.luaL_unref(L, lua.LUA_REGISTRYINDEX, pantoRef);
          lauxlib.luaL_unref(L, lua.LUA_REGISTRYINDEX, envRef);
          return fail(r);
        }
        tools.push(r);
        this.#sandbox.grant(pantoRef, r.capabilities);
      }
      this.#sandbox.seal(envRef);
      lua.lua_settop(L, top);
      return { tools, errors };
    } catch (err) {
      if (err instanceof LuaConversionError) return fail(`${chunkname}: ${err.message}`);
      return fail(`${chunkname}: internal error while loading: ${(err as Error).message}`);
    } finally {
      this.#loadingFile = undefined;
      this.#release(call);
    }
  }

  /**
   * One tool table at `idx` of `T` (read raw) as a loaded tool (its handler referenced in the registry), or the load
   * error. `where` prefixes messages (`read.lua`, `tools.lua: tools[2]`).
   */
  #readTool(T: LuaState, idx: number, where: string, file: string): LoadedLuaTool | string {
    const max = this.#budgets.maxTextBytes;
    const name = rawText(T, idx, 'name', max);
    const description = rawText(T, idx, 'description', max);
    if (name === null || !NAME_RE.test(name))
      return `${where}: 'name' must be a string matching ^[a-zA-Z0-9_-]{1,64}$`;
    if (description === null) return `${where}: tool '${name}' has no 'description' string`;
    const capabilities = this.#readCapabilities(T, idx, where, name);
    if (typeof capabilities === 'string') return capabilities;
    rawField(T, idx, 'needs_approval');
    const approvalType = lua.lua_type(T, -1);
    const needsApproval = approvalType === lua.LUA_TBOOLEAN ? lua.lua_toboolean(T, -1) : undefined;
    lua.lua_pop(T, 1);
    if (approvalType !== lua.LUA_TBOOLEAN && approvalType !== lua.LUA_TNIL) {
      return `${where}: tool '${name}': 'needs_approval' must be true or false, got ${typeName(T, approvalType)}`;
    }
    let parameters: Record<string, unknown> = { type: 'object', properties: {} };
    rawField(T, idx, 'parameters');
    const paramsType = lua.lua_type(T, -1);
    try {
      if (paramsType === lua.LUA_TTABLE) {
        const value = luaToJson(T, lua.lua_gettop(T), 'parameters', { maxStringBytes: max });
        if (Array.isArray(value) || value === null || typeof value !== 'object') {
          return `${where}: tool '${name}': 'parameters' must be a JSON Schema object`;
        }
        parameters = normalizeSchema(value) as Record<string, unknown>;
        if (parameters.type === undefined) parameters = { type: 'object', ...parameters };
        if (parameters.type !== 'object') {
          return `${where}: tool '${name}': 'parameters' must describe an object (type = "object")`;
        }
        const problem = schemaProblem(parameters);
        if (problem !== undefined)
          return `${where}: tool '${name}': 'parameters' is not a valid JSON Schema: ${problem}`;
      } else if (paramsType !== lua.LUA_TNIL) {
        return `${where}: tool '${name}': 'parameters' must be a table, got ${typeName(T, paramsType)}`;
      }
    } catch (err) {
      if (err instanceof LuaConversionError) return `${where}: ${err.message}`;
      throw err;
    } finally {
      lua.lua_pop(T, 1);
    }
    const extras = readDeclExtras(T, idx, `${where}: tool '${name}'`, max);
    if (typeof extras === 'string') return extras;
    rawField(T, idx, 'handler');
    const handlerType = lua.lua_type(T, -1);
    if (handlerType !== lua.LUA_TFUNCTION) {
      lua.lua_pop(T, 1);
      return `${where}: tool '${name}' has no 'handler' function (got ${typeName(T, handlerType)})`;
    }
    lua.lua_xmove(T, this.#L, 1);
    const handlerRef = lauxlib.luaL_ref(this.#L, lua.LUA_REGISTRYINDEX);
    return {
      name,
      description,
      parameters,
      ...extras,
      file,
      handlerRef,
      capabilities,
      capabilitySet: new Set(capabilities),
      nameBytes: new TextEncoder().encode(name),
      needsApproval,
    };
  }

  /** The `capabilities = {...}` of the tool table at `idx` (read raw), checked against the grant; a string is the error. */
  #readCapabilities(T: LuaState, idx: number, chunkname: string, name: string): string[] | string {
    rawField(T, idx, 'capabilities');
    const t = lua.lua_type(T, -1);
    try {
      if (t === lua.LUA_TNIL) return [];
      const where = `${chunkname}: tool '${name}': 'capabilities'`;
      if (t !== lua.LUA_TTABLE) return `${where} must be a list of strings, got ${typeName(T, t)}`;
      const value = luaToJson(T, lua.lua_gettop(T), 'capabilities', { maxStringBytes: 200 });
      const list = Array.isArray(value) ? value : Object.keys(value as object).length === 0 ? [] : null;
      if (list === null || list.some((c) => typeof c !== 'string'))
        return `${where} must be a list of strings`;
      const out: string[] = [];
      for (const c of list as string[]) {
        if (!this.#known.includes(c)) {
          return `${where}: unknown capability '${c}' (known: ${this.#known.join(', ')})`;
        }
        if (!this.#grant.has(c)) {
          return `${where}: ${NOT_GRANTED} '${c}' (granted: ${[...this.#grant].join(', ') || 'none'})`;
        }
        if (!out.includes(c)) out.push(c);
      }
      return out;
    } finally {
      lua.lua_pop(T, 1);
    }
  }

  /** Run a tool's handler with `args` and read its result. Never rejects for the tool's own failure. */
  async call(tool: LoadedLuaTool, args: Record<string, unknown>, ctx: RunContext): Promise<CallResult> {
    if (ctx.signal?.aborted) return { ok: false, error: 'aborted before the tool started' };
    // A free slot is taken at once (no await: a trivial call costs no extra microtask turn).
    if (this.#running < this.#maxConcurrent) this.#running++;
    else if (!(await this.#waitForSlot(ctx.signal)))
      return { ok: false, error: 'aborted before the tool started' };
    const call = this.#newCall(tool.name, tool.file, ctx, tool.capabilitySet);
    const T = call.thread;
    let stop: string | undefined;
    let clean = false;
    try {
      lua.lua_rawgeti(T, lua.LUA_REGISTRYINDEX, tool.handlerRef);
      pushJson(T, args, 'args');
      lua.lua_createtable(T, 0, 2);
      pushString(T, ctx.toolCallId);
      lua.lua_setfield(T, -2, K_TOOL_CALL_ID);
      pushBytesNoCopy(T, tool.nameBytes);
      lua.lua_setfield(T, -2, K_TOOL_NAME);
      const outcome = await this.#drive(call, 2, ctx.signal);
      if (!outcome.ok) {
        stop = outcome.error;
        return { ok: false, error: outcome.error };
      }
      clean = true;
      const res = readHandlerResult(T, 1, outcome.nresults, this.#budgets);
      if (!res.ok) return { ok: false, error: res.error };
      return res.meta === undefined
        ? { ok: true, parts: res.parts }
        : { ok: true, parts: res.parts, meta: res.meta };
    } catch (err) {
      // A fault on the host side (e.g. arguments nested too deep to convert): an error result, never a rejection.
      const message = capString(err instanceof Error ? err.message : String(err), 1000);
      this.#log({
        level: 'error',
        message: `tool '${tool.name}' failed in the host: ${message}`,
        ...(err instanceof Error && err.stack !== undefined ? { traceback: capString(err.stack, 8192) } : {}),
        tool: tool.name,
      });
      return { ok: false, error: `internal error in the Lua host: ${message}` };
    } finally {
      this.#release(call, stop, clean);
      this.#releaseSlot();
    }
  }

  /** Wait for a call slot when all are taken (FIFO). False when the signal aborted while waiting. */
  #waitForSlot(signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const grant = () => {
        unwatch();
        resolve(true);
      };
      const unwatch = this.#aborts.watch(signal, () => {
        const i = this.#queue.indexOf(grant);
        if (i >= 0) this.#queue.splice(i, 1);
        resolve(false);
      });
      this.#queue.push(grant);
    });
  }

  #releaseSlot(): void {
    const next = this.#queue.shift();
    if (next) next();
    else this.#running--;
  }

  #newCall(tool: string, file: string, ctx: RunContext, capabilities: ReadonlySet<string> = NONE): CallState {
    const L = this.#L;
    let thread: LuaState;
    let threadRef: number;
    const idle = this.#idleThreads.pop();
    if (idle !== undefined) ({ thread, ref: threadRef } = idle);
    else {
      thread = lua.lua_newthread(L);
      threadRef = lauxlib.luaL_ref(L, lua.LUA_REGISTRYINDEX);
    }
    const budgets = this.#budgets;
    const now = performance.now();
    const timeExceeded = (t: number): boolean => call.ownMs + (t - call.sliceStart) > budgets.wallClockMs;
    const call: CallState = {
      thread,
      threadRef,
      tool,
      file,
      toolCallId: ctx.toolCallId,
      root: ctx.root,
      update: ctx.update,
      capabilities,
      signal: ctx.signal,
      tag: ctx.tag,
      controller: null,
      unwatch: null,
      host: null,
      requiring: [],
      instructions: 0,
      ownMs: 0,
      sliceStart: now,
      allocated: 0,
      exceeded: null,
      hook: (T) => {
        if (call.exceeded !== null) raiseFromHook(T, call.exceeded);
        call.instructions += HOOK_INTERVAL;
        if (call.instructions > budgets.instructions) {
          this.#exceed(call, T, `instruction budget exceeded (${budgets.instructions} Lua instructions)`);
        }
        const t = performance.now();
        if (timeExceeded(t)) this.#exceed(call, T, `time budget exceeded (${budgets.wallClockMs} ms)`);
        if (t - currentBurstStart() > budgets.sliceMs) {
          if (lua.lua_isyieldable(T)) {
            sliceYields.add(T);
            lua.lua_yield(T, 0);
          } else if (t - call.sliceStart > budgets.maxBlockingMs) {
            this.#exceed(call, T, blockingMessage(budgets.maxBlockingMs, 'Lua code that cannot yield'));
          }
        }
      },
      meter: {
        alloc: (bytes, charge) => {
          if (call.exceeded !== null) return;
          const total = call.allocated + bytes;
          if (total > budgets.memoryBytes) {
            this.#overrun(
              call,
              `memory budget exceeded (${budgets.memoryBytes} bytes: this call allocated ${mib(call.allocated)} ` +
                `and asked for ${mib(bytes)} more)`,
            );
          }
          if (charge) call.allocated = total;
        },
        step: () => {
          if (call.exceeded !== null) return;
          const t = performance.now();
          if (timeExceeded(t)) {
            this.#overrun(
              call,
              `time budget exceeded (${budgets.wallClockMs} ms, inside a library function)`,
            );
          }
          if (t - call.sliceStart > budgets.maxBlockingMs) {
            this.#overrun(call, blockingMessage(budgets.maxBlockingMs, 'one library function'));
          }
        },
      },
    };
    lua.lua_sethook(thread, call.hook, lua.LUA_MASKCOUNT, HOOK_INTERVAL);
    this.#sandbox.claimThread(thread, call);
    return call;
  }

  /** A budget ran out inside a library function: mark the call and throw out of fengari (becomes a Lua error). */
  #overrun(call: CallState, reason: string): never {
    call.exceeded = reason;
    lua.lua_sethook(call.thread, call.hook, lua.LUA_MASKCOUNT, 1);
    throw new BudgetExceeded(reason);
  }

  #exceed(call: CallState, T: LuaState, reason: string): never {
    call.exceeded = withPosition(reason, T);
    // From now on the hook fires on every instruction of every thread of this call, until it has unwound.
    lua.lua_sethook(T, call.hook, lua.LUA_MASKCOUNT, 1);
    lua.lua_sethook(call.thread, call.hook, lua.LUA_MASKCOUNT, 1);
    return raiseFromHook(T, reason);
  }

  /**
   * End a call: stop its host work (`ctx.signal` of host functions), drop its thread, or keep it for a later call
   * when the call ran to a clean end (`clean`: returned normally, so the thread is as new again: empty stack, base
   * call frame, hooks allowed). Reusing threads saves a `lua_newthread` (a fresh stack of TValues)
   * and a registry slot per call.
   */
  #release(call: CallState, reason?: string, clean = false): void {
    if (call.controller !== null) {
      call.unwatch?.();
      if (!call.controller.signal.aborted) call.controller.abort(new Error(reason ?? 'the tool call ended'));
    }
    const T = call.thread;
    lua.lua_sethook(T, null, 0, 0);
    lua.lua_settop(T, 0);
    if (
      clean &&
      this.#idleThreads.length < IDLE_THREADS &&
      T.status === lua.LUA_OK &&
      T.allowhook === 1 &&
      T.ci === T.base_ci
    ) {
      this.#idleThreads.push({ thread: T, ref: call.threadRef });
      return;
    }
    lauxlib.luaL_unref(this.#L, lua.LUA_REGISTRYINDEX, call.threadRef);
  }

  /** Run `call.thread` (function + `nargs` arguments on its stack) to completion, one fair slice at a time. */
  async #drive(call: CallState, nargs: number, signal?: AbortSignal): Promise<Outcome> {
    const T = call.thread;
    const budgets = this.#budgets;
    let n = nargs;
    // Started from inside another resume (a synchronous host function calling a tool): run once that has returned.
    if (vmBusy()) await Promise.resolve();
    for (;;) {
      if (!mayRunNow(budgets.sliceMs)) {
        await nextTurn();
        const stop = this.#stopReason(call, signal);
        if (stop !== null) return { ok: false, error: stop };
      }
      beginSlice();
      call.sliceStart = performance.now();
      this.#active = call;
      setMeter(call.meter);
      setPatternWatch(call.meter.step);
      let status: number;
      enterVm();
      try {
        status = lua.lua_resume(T, null, n);
      } finally {
        leaveVm();
        this.#active = null;
        setMeter(null);
        setPatternWatch(null);
        call.ownMs += performance.now() - call.sliceStart;
      }
      if (status === lua.LUA_OK) return { ok: true, nresults: lua.lua_gettop(T) };
      if (status !== lua.LUA_YIELD) return { ok: false, error: this.#errorOf(call, status) };

      if (sliceYields.delete(T)) {
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
        // The answer is pushed under the call's memory meter (a 64 MB read counts against its budget).
        this.#active = call;
        setMeter(call.meter);
        try {
          n = pusher(T);
        } catch (err) {
          if (err instanceof BudgetExceeded) return { ok: false, error: err.message };
          return { ok: false, error: `internal error in the Lua host: ${(err as Error).message}` };
        } finally {
          this.#active = null;
          setMeter(null);
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

  /**
   * Await a host promise; the wait counts as the call's own time and is bounded by what is left of its time budget
   * and by the abort signal. A string is the stop reason.
   */
  async #await(call: CallState, pending: Promise<Pusher>, signal?: AbortSignal): Promise<Pusher | string> {
    const budgets = this.#budgets;
    const started = performance.now();
    const remaining = budgets.wallClockMs - call.ownMs;
    if (remaining <= 0) return withPosition(`time budget exceeded (${budgets.wallClockMs} ms)`, call.thread);
    const result = await new Promise<Pusher | string>((resolve) => {
      if (signal?.aborted) {
        resolve('aborted');
        return;
      }
      const timer = setTimeout(() => {
        cleanup();
        resolve(`time budget exceeded (${budgets.wallClockMs} ms, waiting for a host call)`);
      }, remaining);
      const unwatch = this.#aborts.watch(signal, () => {
        cleanup();
        resolve('aborted');
      });
      const cleanup = () => {
        clearTimeout(timer);
        unwatch();
      };
      pending.then((p) => {
        cleanup();
        resolve(p);
      });
    });
    call.ownMs += performance.now() - started;
    return result;
  }

  /** Why the suspended call must stop now, or null; a time budget spent names where the call stands, as the hook's. */
  #stopReason(call: CallState, signal?: AbortSignal): string | null {
    if (signal?.aborted) return 'aborted';
    if (call.exceeded !== null) return call.exceeded;
    if (call.ownMs > this.#budgets.wallClockMs)
      return withPosition(`time budget exceeded (${this.#budgets.wallClockMs} ms)`, call.thread);
    return null;
  }

  /**
   * The tool error for a failed thread: `message (file:line)`, capped at `maxTextBytes`, with nested positions
   * (`a.lua:3: a.lua:3: boom`, from re-raised errors) collapsed to the innermost. The error value is read raw (a
   * `__tostring` never runs here). The traceback goes to the host log.
   */
  #errorOf(call: CallState, status: number): string {
    const T = call.thread;
    const L = this.#L;
    const max = this.#budgets.maxTextBytes;
    let raw = describeErrorValue(T, max);
    if (status === lua.LUA_ERRMEM) raw = `out of memory: ${raw}`;
    if (status === lua.LUA_ERRERR) raw = `error in error handling: ${raw}`;
    let message = raw;
    let position: string | null = null;
    for (let m = POSITION_RE.exec(message); m !== null; m = POSITION_RE.exec(message)) {
      position = `${m[1]}:${m[2]}`;
      message = message.slice(m[0].length);
    }
    if (position !== null) message = `${message} (${position})`;
    if (call.exceeded !== null) message = call.exceeded;
    lauxlib.luaL_traceback(L, T, null, 0);
    const traceback = capText(lua.lua_tolstring(L, -1) ?? new Uint8Array(0), 64 * 1024, 'traceback');
    lua.lua_pop(L, 1);
    this.#log({
      level: 'error',
      message:
        call.tool === ''
          ? `loading ${call.file} failed: ${message}`
          : `tool '${call.tool}' failed: ${message}`,
      traceback: `${raw.length > 4096 ? `${raw.slice(0, 4096)}...` : raw}\n${traceback}`,
      file: call.file,
      ...(call.tool === '' ? {} : { tool: call.tool, toolCallId: call.toolCallId }),
    });
    return message;
  }
}

/** The error value on top of `T`'s stack as text, read raw and capped. */
function describeErrorValue(T: LuaState, max: number): string {
  const et = lua.lua_type(T, -1);
  if (et === lua.LUA_TSTRING) return capText(lua.lua_tolstring(T, -1) ?? new Uint8Array(0), max, 'message');
  if (et === lua.LUA_TNUMBER) return String(lua.lua_tonumber(T, -1));
  if (et === lua.LUA_TNIL) return 'error called with nil';
  if (et === lua.LUA_TBOOLEAN) return `error object is a boolean value (${lua.lua_toboolean(T, -1)})`;
  if (et === lua.LUA_TTABLE) {
    try {
      const v = luaToJson(T, lua.lua_gettop(T), 'error', { maxStringBytes: max });
      return capString(`error object: ${JSON.stringify(v)}`, max, 'message');
    } catch {
      return 'error object is a table value';
    }
  }
  return `error object is a ${typeName(T, et)} value`;
}

/** Push `t[key]` (raw) for the table at `idx`. */
function rawField(T: LuaState, idx: number, key: string): void {
  const abs = lua.lua_absindex(T, idx);
  pushString(T, key);
  lua.lua_rawget(T, abs);
}

/** `t[key]` of the table at `idx`, read raw, as capped text; null when it is not a string. */
function rawText(T: LuaState, idx: number, key: string, max: number): string | null {
  rawField(T, idx, key);
  const out =
    lua.lua_type(T, -1) === lua.LUA_TSTRING
      ? capText(lua.lua_tolstring(T, -1) ?? new Uint8Array(0), max)
      : null;
  lua.lua_pop(T, 1);
  return out;
}

function blockingMessage(ms: number, what: string): string {
  return (
    `${what} ran for more than ${ms} ms without giving the host a turn (maxBlockingMs); ` +
    'split the work into smaller pieces'
  );
}

function mib(bytes: number): string {
  return bytes >= MIB ? `${(bytes / MIB).toFixed(1)} MiB` : `${bytes} bytes`;
}

/** `reason` with the file and line the thread was running (`… at loop.lua:7`), when Lua code is on its stack. */
export function withPosition(reason: string, T: LuaState): string {
  // A thread suspended by the slice hook can have its stack full up to its frame's top: room for the one string
  // luaL_where pushes first (else fengari's API check throws "stack overflow" out of the host).
  if (!lua.lua_checkstack(T, 1)) return reason;
  for (const level of [0, 1]) {
    lauxlib.luaL_where(T, level);
    const raw = lua.lua_tolstring(T, -1);
    const where = raw === null ? '' : fengari.to_jsstring(raw);
    lua.lua_pop(T, 1);
    if (where !== '') return `${reason} at ${where.replace(/: $/, '')}`;
  }
  return reason;
}

/**
 * For a `parameters` JSON Schema error: the line of the only place the bad value appears quoted in `source`, if it
 * does appear exactly once.
 */
function schemaErrorLine(source: Uint8Array, message: string): number | undefined {
  const value = /is not a valid JSON Schema: .*\(got "([^"]*)"\)/.exec(message)?.[1];
  if (value === undefined || value === '') return undefined;
  const text = Buffer.from(source.buffer, source.byteOffset, source.byteLength).toString('latin1');
  const hits = [`"${value}"`, `'${value}'`].flatMap((q) => {
    const at: number[] = [];
    for (let i = text.indexOf(q); i >= 0; i = text.indexOf(q, i + 1)) at.push(i);
    return at;
  });
  if (hits.length !== 1) return undefined;
  return text.slice(0, hits[0]).split('\n').length;
}

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
