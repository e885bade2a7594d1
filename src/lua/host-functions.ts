/**
 * Host functions: a host's own JS functions that Lua tools call as `panto.<name>(args)` (the `hostFunctions` option
 * of `LuaToolSource.fromDir`; docs/lua-tools.md "Host functions"). Each name is also the capability a tool file
 * declares to get it.
 *
 * This module holds the public types, the option check and the result check (`prepareHostValue`); it does not load
 * fengari. The Lua side is in host-api.ts, the worker proxy in worker-backend.ts / lua-worker.ts.
 *
 * Contract: a host function receives ONE value (the Lua argument by the JSON mapping; a Lua string that is not valid
 * UTF-8 arrives as a `Uint8Array` copy) and a context, and returns (or resolves to) a JSON-like value; `Uint8Array`s
 * become Lua strings with the same bytes. In-thread it is called right away from the Lua call: a plain value answers
 * without suspending the tool (a few µs), a promise suspends only the calling coroutine. It may call back into the
 * tool source (such a call starts once the running Lua has yielded). A throw or rejection is `nil, message` in Lua.
 */

import { PantoError } from '../errors.js';

/** A value crossing between Lua and a host function. `null` is `panto.json.null` in Lua. */
export type HostValue =
  | null
  | boolean
  | number
  | string
  | Uint8Array
  | HostValue[]
  | { [key: string]: HostValue };

/** What a host function receives besides its argument. */
export interface HostFunctionContext {
  /**
   * Aborted when the tool call is aborted, runs out of its time budget (waiting counts, see docs), or ends while this
   * function is still running. Stop promptly: the call no longer waits for the answer.
   */
  signal: AbortSignal;
  /** The tool whose call is calling. */
  toolName: string;
  /** The id of that tool call. */
  toolCallId: string;
  /** Real path of the call's workspace root. */
  workspaceRoot: string;
}

/** A host function (see the module doc). `undefined` returns `true` to Lua, so `assert(panto.f(x))` holds. */
export type HostFunction = (args: HostValue, ctx: HostFunctionContext) => unknown;

/** Names a host function may have: what is a plain Lua identifier in lower case. */
export const HOST_FUNCTION_NAME = /^[a-z_][a-z0-9_]*$/;

/**
 * The names of `hostFunctions` after checking them against the reserved `panto.*` names. Throws
 * `ERR_INVALID_ARGUMENT` naming the offending entry.
 */
export function checkHostFunctions(fns: unknown, reserved: ReadonlySet<string>): string[] {
  if (fns === undefined) return [];
  if (fns === null || typeof fns !== 'object' || Array.isArray(fns)) {
    throw new PantoError(
      'ERR_INVALID_ARGUMENT',
      'hostFunctions must be an object mapping names to functions',
    );
  }
  const names = Object.keys(fns);
  for (const name of names) {
    if (!HOST_FUNCTION_NAME.test(name) || name.length > 64) {
      throw new PantoError(
        'ERR_INVALID_ARGUMENT',
        `hostFunctions: '${name.slice(0, 80)}' is not a valid name (^[a-z_][a-z0-9_]*$, at most 64 characters)`,
      );
    }
    if (reserved.has(name)) {
      throw new PantoError(
        'ERR_INVALID_ARGUMENT',
        `hostFunctions: '${name}' collides with the built-in panto.${name}; choose another name`,
      );
    }
    if (typeof (fns as Record<string, unknown>)[name] !== 'function') {
      throw new PantoError('ERR_INVALID_ARGUMENT', `hostFunctions.${name} must be a function`);
    }
  }
  return names;
}

/** A host function's outcome as the Lua side receives it. */
export type HostOutcome = { ok: true; value: HostValue } | { ok: false; error: string };

/** The call a host function runs for (what its context is made from). */
export interface HostCallInfo {
  /** Real path of the call's workspace root. */
  readonly root: string;
  /** The tool being called ('' while a tool file loads). */
  readonly tool: string;
  readonly toolCallId: string;
  /** What the invoker needs to find the call (with a worker: the parent's id of the call). */
  readonly tag: number | undefined;
  /** Aborted when the call ends, is aborted or runs out of its time budget. */
  readonly signal: AbortSignal;
}

/**
 * How `panto.<name>` reaches a host function: directly (in-thread) or through the worker's parent. `invoke` never
 * throws or rejects; it answers at once when the host function did (a synchronous function in-thread), else with a
 * promise. A successful value's `Uint8Array`s are owned by the receiver (they enter Lua without a copy).
 */
export interface HostInvoker {
  readonly names: readonly string[];
  invoke(name: string, args: HostValue, call: HostCallInfo): HostOutcome | Promise<HostOutcome>;
}

/** The invoker of host functions that live on this thread. */
export function directInvoker(fns: Readonly<Record<string, HostFunction>>, maxBytes: number): HostInvoker {
  return {
    names: Object.keys(fns),
    invoke: (name, args, call) => {
      const fn = fns[name];
      if (fn === undefined || !Object.hasOwn(fns, name))
        return { ok: false, error: `no host function '${name}'` };
      const ctx: HostFunctionContext = {
        signal: call.signal,
        toolName: call.tool,
        toolCallId: call.toolCallId,
        workspaceRoot: call.root,
      };
      const r = runHostFunction(name, fn, args, ctx, maxBytes);
      const answer = (x: Awaited<typeof r>): HostOutcome => (x.ok ? { ok: true, value: x.value } : x);
      return r instanceof Promise ? r.then(answer) : answer(r);
    },
  };
}

/** Bytes one table entry is charged in `prepareHostValue`'s size count. */
const ENTRY_BYTES = 16;
const MAX_DEPTH = 64;

/**
 * Check and copy what a host function returned, for Lua: a fresh tree of plain objects, arrays and OWNED
 * `Uint8Array` copies (each bytes view copied once; the list of their buffers is returned for a transfer to a worker).
 * The JSON rules: own enumerable string keys, `toJSON` honoured, `undefined` members left out (`null` in arrays);
 * `undefined` at the top is `true`. An error (never a cut) for a value over `maxBytes` (strings as UTF-8, bytes, and
 * 16 per entry), nested deeper than 64 levels, a cycle, a function, symbol, non-finite number, Promise, Map or Set.
 */
export function prepareHostValue(
  value: unknown,
  maxBytes: number,
  what: string,
): { ok: true; value: HostValue; buffers: ArrayBuffer[] } | { ok: false; error: string } {
  if (value === undefined) return { ok: true, value: true, buffers: [] };
  const buffers: ArrayBuffer[] = [];
  let size = 0;
  const ancestors = new Set<object>();
  // An object reached again by another path is not walked again: its size counts again (Lua gets a copy per path),
  // its checked copy is reused. So a value sharing subtrees (2^40 paths through 40 objects) costs its objects, not
  // its paths, to refuse.
  const done = new Map<object, { value: HostValue; size: number }>();
  const fail = (path: string, why: string): never => {
    throw new HostValueError(`${what}${path} ${why}`);
  };
  const visit = (v: unknown, path: string, depth: number): HostValue => {
    size += ENTRY_BYTES;
    if (size > maxBytes) fail('', `is over the ${maxBytes}-byte cap of a host value`);
    if (v === null) return null;
    switch (typeof v) {
      case 'boolean':
        return v;
      case 'number':
        if (!Number.isFinite(v)) fail(path, `is ${v}, which has no JSON form`);
        return v;
      case 'string':
        // A UTF-16 unit is at least one UTF-8 byte: a string longer than the cap is over it without counting.
        size += v.length > maxBytes ? v.length : Buffer.byteLength(v);
        if (size > maxBytes) fail('', `is over the ${maxBytes}-byte cap of a host value`);
        return v;
      case 'bigint':
        if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER))
          fail(path, 'is a bigint beyond 2^53');
        return Number(v);
      case 'object':
        break;
      default:
        return fail(path, `is a ${typeof v}, which has no JSON form`);
    }
    const obj = v as object;
    if (obj instanceof Uint8Array || obj instanceof ArrayBuffer) {
      const view = obj instanceof ArrayBuffer ? new Uint8Array(obj) : obj;
      size += view.byteLength;
      if (size > maxBytes) fail('', `is over the ${maxBytes}-byte cap of a host value`);
      const own = new Uint8Array(view.byteLength);
      own.set(view);
      buffers.push(own.buffer);
      return own;
    }
    const again = done.get(obj);
    if (again !== undefined) {
      size += again.size;
      if (size > maxBytes) fail('', `is over the ${maxBytes}-byte cap of a host value`);
      return again.value;
    }
    if (ArrayBuffer.isView(obj)) fail(path, 'is a typed array other than Uint8Array; pass a Uint8Array');
    if (obj instanceof Promise || typeof (obj as { then?: unknown }).then === 'function')
      fail(path, 'is a Promise; await it before returning');
    if (obj instanceof Map || obj instanceof Set)
      fail(path, `is a ${obj.constructor.name}; use an object or an array`);
    if (depth >= MAX_DEPTH) fail(path, `is nested deeper than ${MAX_DEPTH} levels`);
    if (ancestors.has(obj)) fail(path, 'refers back to itself (a cycle)');
    const before = size - ENTRY_BYTES;
    const toJSON = (obj as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return visit(toJSON.call(obj), path, depth + 1);
    ancestors.add(obj);
    let out: HostValue;
    if (Array.isArray(obj)) {
      const arr: HostValue[] = new Array(obj.length);
      for (let i = 0; i < obj.length; i++) {
        const item: unknown = obj[i];
        arr[i] = item === undefined ? null : visit(item, `${path}[${i + 1}]`, depth + 1);
      }
      out = arr;
    } else {
      const rec: { [key: string]: HostValue } = {};
      for (const key of Object.keys(obj)) {
        const item: unknown = (obj as Record<string, unknown>)[key];
        if (item === undefined) continue;
        size += Buffer.byteLength(key);
        const got = visit(item, `${path}.${key.length > 40 ? `${key.slice(0, 40)}...` : key}`, depth + 1);
        Object.defineProperty(rec, key, { value: got, enumerable: true, writable: true, configurable: true });
      }
      out = rec;
    }
    ancestors.delete(obj);
    done.set(obj, { value: out, size: size - before });
    return out;
  };
  try {
    return { ok: true, value: visit(value, '', 0), buffers };
  } catch (err) {
    if (err instanceof HostValueError) return { ok: false, error: err.message };
    // A throwing getter or toJSON of the host's own value.
    return { ok: false, error: `${what} could not be read: ${(err as Error)?.message ?? String(err)}` };
  }
}

class HostValueError extends Error {}

/**
 * The buffers of the `Uint8Array`s in `value` that own their whole buffer (copies made for the crossing), to
 * transfer them to another thread instead of copying them again.
 */
export function hostValueBuffers(value: HostValue): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  const walk = (v: HostValue): void => {
    if (v instanceof Uint8Array) {
      const b = v.buffer;
      if (b instanceof ArrayBuffer && v.byteOffset === 0 && v.byteLength === b.byteLength) out.add(b);
    } else if (Array.isArray(v)) {
      for (const x of v) walk(x);
    } else if (v !== null && typeof v === 'object') {
      for (const x of Object.values(v)) walk(x);
    }
  };
  walk(value);
  return [...out];
}

/** The message of a host function's throw or rejection. */
export function hostErrorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'string') return err;
  try {
    return String(err);
  } catch {
    return 'host function failed';
  }
}

type Prepared = { ok: true; value: HostValue; buffers: ArrayBuffer[] } | { ok: false; error: string };

/**
 * Run host function `fn` and check its result (`prepareHostValue` under `maxBytes`): at once when `fn` returns a
 * plain value, as a promise when it returns a thenable. Never throws or rejects: a throw, a rejection or a bad result
 * is `{ok: false, error}`.
 */
export function runHostFunction(
  name: string,
  fn: HostFunction,
  args: HostValue,
  ctx: HostFunctionContext,
  maxBytes: number,
): Prepared | Promise<Prepared> {
  const what = `the result of panto.${name}`;
  let value: unknown;
  try {
    value = fn(args, ctx);
  } catch (err) {
    return { ok: false, error: hostErrorMessage(err) };
  }
  if (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { then?: unknown }).then === 'function'
  ) {
    return Promise.resolve(value as PromiseLike<unknown>).then(
      (v) => prepareHostValue(v, maxBytes, what),
      (err: unknown) => ({ ok: false, error: hostErrorMessage(err) }),
    );
  }
  return prepareHostValue(value, maxBytes, what);
}
