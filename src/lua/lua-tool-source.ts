/**
 * `LuaToolSource`: tools written in Lua, loaded from `.lua` files (docs/lua-tools.md).
 *
 * A tool file returns `{ name, description, parameters, handler, capabilities? }`. Every `*.lua` file directly inside
 * each directory is loaded (sorted by name; the package's own `lua/` first when `includeBuiltins` is set). A file that
 * fails to compile, raises while loading or returns a bad table is reported in `loadErrors` (file + line) and to the
 * log; the other files still load.
 *
 * Isolation: by default the Lua VM runs on the caller's thread (`isolation: 'thread'`), bounded by the budgets. With
 * `isolation: 'worker'` it runs in a `worker_threads` Worker with V8 `resourceLimits` and a watchdog that terminates
 * a worker whose event loop stops answering (and restarts it; the calls in flight fail with a clear error, later
 * calls are served by the new worker). Results, logs and progress cross as messages.
 */

import path from 'node:path';
import { PantoError } from '../errors.js';
import { packagePath } from '../package-root.js';
import type { ToolContext, ToolDecl } from '../tool.js';
import type { CallResult, ToolSource } from '../tool-source.js';
import { AddressRules } from './address-rules.js';
import { type LuaBudgets, resolveBudgets } from './budget.js';
import { CAPABILITIES, type Capability, DEFAULT_GRANT, RESERVED_NAMES } from './capabilities.js';
import type { ExecOptions } from './exec-command.js';
import type { FetchOptions } from './fetch-url.js';
import { checkHostFunctions, directInvoker, type HostFunction } from './host-functions.js';
import type { LuaLogger } from './lua-log.js';
import type { LuaLoadError } from './lua-runtime.js';
import type { ApprovalPolicy, ResolvedSourceOptions } from './resolved-source-options.js';
import type { ToolBackend } from './thread-backend.js';
import type { WorkerOptions } from './worker-backend.js';
import { DEFAULT_DENYLIST, realRoot } from './workspace-paths.js';

export interface LuaToolSourceOptions {
  /**
   * Workspace root that `panto.*` file access is confined to. When set it wins over `ToolContext.workspaceRoot`;
   * when unset each call uses its context's root. Load-time code uses this or the current directory.
   */
  workspaceRoot?: string;
  /** Paths refused even inside the root. Default `DEFAULT_DENYLIST`; pass `[...DEFAULT_DENYLIST, ...]` to extend. */
  denylist?: readonly string[];
  /** Per-call budgets (see `LuaBudgets`). */
  budgets?: LuaBudgets;
  /** Host log: print output, `panto.log`, load errors, tool errors with tracebacks. Default: discard. */
  log?: LuaLogger;
  /** Also load the tools shipped with the package (`lua/`, e.g. `read`). Default false. */
  includeBuiltins?: boolean;
  /** A directory that does not exist gives no tools instead of `ERR_TOOL_LOAD` (an optional tool folder). */
  ignoreMissing?: boolean;
  /** Source name used in error messages. Default `lua:<the last directory>`. */
  name?: string;
  /**
   * Standard capabilities a tool file may declare with `capabilities = {...}`: `read_file`, `stat`, `list_dir`,
   * `write_file`, `make_dir`, `exec`, `fetch`. A file declaring one that is not granted does not load (see
   * `loadErrors`). Default: reading only (`read_file`, `stat`, `list_dir`).
   */
  capabilities?: readonly Capability[];
  /**
   * The host's own functions, called from Lua as `panto.<name>(args)`; each name is also a capability a tool file
   * declares (granted by being here). Names match `^[a-z_][a-z0-9_]*$` and must not collide with a built-in
   * `panto.*` name. See docs/lua-tools.md "Host functions".
   */
  hostFunctions?: Readonly<Record<string, HostFunction>>;
  /**
   * Which tools need approval before each call (`ToolDecl.needsApproval`, asked by the Agent's `approveToolCall`):
   * `'auto'` (default: tools with `needs_approval = true`, and tools declaring `write_file`, `make_dir`, `exec` or
   * `fetch`), `'declared'` (only `needs_approval = true`), `'none'`.
   */
  approval?: ApprovalPolicy;
  /** Settings of `exec` (when granted): the environment commands get, the default timeout, the output cap. */
  exec?: ExecOptions;
  /** Settings of `fetch` (when granted): allowed hosts, private hosts/ranges, the default deadline, the body cap. */
  fetch?: FetchOptions;
  /** Calls that run at once; more wait in a FIFO queue without using their time budget. Default 8. */
  maxConcurrentCalls?: number;
  /** Where the Lua VM runs: `'thread'` (default, the caller's thread) or `'worker'` (a worker thread, see above). */
  isolation?: 'thread' | 'worker';
  /** Settings of `isolation: 'worker'`. */
  worker?: WorkerOptions;
}

/** Options of `LuaToolSource.run`. */
export interface LuaRunOptions {
  /** Workspace root of this call (default: the source's `workspaceRoot`, else the current directory). */
  workspaceRoot?: string;
  signal?: AbortSignal;
  /** Default: a fresh `run-<n>` id. */
  toolCallId?: string;
  /** Progress callback (`panto.progress`). */
  update?: ToolContext['update'];
}

let runCounter = 0;

export class LuaToolSource implements ToolSource {
  readonly name: string;
  /** Files that did not load, with the reason (and line when known). */
  readonly loadErrors: readonly LuaLoadError[];
  /** Where the VM runs. */
  readonly isolation: 'thread' | 'worker';
  readonly #backend: ToolBackend;
  readonly #decls: readonly ToolDecl[];
  readonly #names: ReadonlySet<string>;
  readonly #fixedRoot: string | undefined;

  private constructor(
    name: string,
    backend: ToolBackend,
    decls: ToolDecl[],
    loadErrors: LuaLoadError[],
    fixedRoot: string | undefined,
    isolation: 'thread' | 'worker',
  ) {
    this.name = name;
    this.#backend = backend;
    this.loadErrors = Object.freeze(loadErrors);
    this.#fixedRoot = fixedRoot;
    this.isolation = isolation;
    this.#decls = Object.freeze(decls);
    this.#names = new Set(decls.map((d) => d.name));
  }

  /** The directory of the Lua tools shipped with the package. */
  static builtinDir(): string {
    return packagePath('lua');
  }

  /**
   * Load every `*.lua` tool in `dir` (or each of `dirs`). Throws `ERR_INVALID_ARGUMENT` for bad options and
   * `ERR_TOOL_LOAD` when a directory cannot be read (or the worker cannot start); a broken tool FILE never throws
   * (see `loadErrors`).
   */
  static async fromDir(
    dir: string | readonly string[],
    options: LuaToolSourceOptions = {},
  ): Promise<LuaToolSource> {
    const dirs = typeof dir === 'string' ? [dir] : [...dir];
    if (dirs.some((d) => typeof d !== 'string' || d.length === 0)) {
      throw new PantoError(
        'ERR_INVALID_ARGUMENT',
        'LuaToolSource.fromDir: directories must be non-empty strings',
      );
    }
    if (options.includeBuiltins) dirs.unshift(LuaToolSource.builtinDir());
    const budgets = resolveBudgets(options.budgets);
    const log: LuaLogger = options.log ?? (() => {});
    const isolation = options.isolation ?? 'thread';
    if (isolation !== 'thread' && isolation !== 'worker') {
      throw new PantoError(
        'ERR_INVALID_ARGUMENT',
        `isolation must be 'thread' or 'worker', got ${String(isolation)}`,
      );
    }
    const hostFunctions = options.hostFunctions ?? {};
    const hostFunctionNames = checkHostFunctions(options.hostFunctions, RESERVED_NAMES);
    const capabilities: string[] = [...(options.capabilities ?? DEFAULT_GRANT)];
    for (const c of capabilities) {
      if (!(CAPABILITIES as readonly string[]).includes(c) && !hostFunctionNames.includes(c)) {
        throw new PantoError(
          'ERR_INVALID_ARGUMENT',
          `unknown capability '${String(c)}' (known: ${CAPABILITIES.join(', ')})`,
        );
      }
    }
    for (const h of hostFunctionNames) if (!capabilities.includes(h)) capabilities.push(h);
    const maxConcurrentCalls = options.maxConcurrentCalls ?? 8;
    if (!Number.isInteger(maxConcurrentCalls) || maxConcurrentCalls < 1) {
      throw new PantoError('ERR_INVALID_ARGUMENT', 'maxConcurrentCalls must be a positive integer');
    }
    let fixedRoot: string | undefined;
    if (options.workspaceRoot !== undefined) {
      try {
        fixedRoot = await realRoot(options.workspaceRoot);
      } catch (err) {
        throw new PantoError(
          'ERR_INVALID_ARGUMENT',
          `workspaceRoot ${options.workspaceRoot} does not exist`,
          {
            cause: err,
          },
        );
      }
    }
    const resolved: ResolvedSourceOptions = {
      dirs: dirs.map((d) => path.resolve(d)),
      budgets,
      denylist: [...(options.denylist ?? DEFAULT_DENYLIST)],
      capabilities,
      hostFunctionNames,
      capabilityOptions: {
        exec: checkExecOptions(options.exec),
        fetch: checkFetchOptions(options.fetch),
      },
      maxConcurrentCalls,
      fixedRoot,
      loadRoot: fixedRoot ?? (await realRoot(process.cwd())),
      ignoreMissing: options.ignoreMissing === true,
      approval: checkApproval(options.approval),
    };
    const name = options.name ?? `lua:${dirs[dirs.length - 1] ?? ''}`;
    if (isolation === 'worker') {
      const { WorkerBackend } = await import('./worker-backend.js');
      const { backend, decls, loadErrors } = await WorkerBackend.start(
        resolved,
        log,
        options.worker ?? {},
        hostFunctions,
      );
      return new LuaToolSource(name, backend, decls, loadErrors, fixedRoot, 'worker');
    }
    // fengari (the Lua VM, ~20 MB with the runtime) loads here, on the first in-thread load, not at import.
    const { loadToolsInThread } = await import('./thread-backend.js');
    const invoker =
      hostFunctionNames.length === 0 ? undefined : directInvoker(hostFunctions, budgets.maxHostValueBytes);
    const { backend, decls, loadErrors } = await loadToolsInThread(resolved, log, invoker);
    return new LuaToolSource(name, backend, decls, loadErrors, fixedRoot, 'thread');
  }

  list(): ToolDecl[] {
    return [...this.#decls];
  }

  /**
   * Call a tool (the `ToolSource` contract: `args` are already validated against its schema). Never rejects for the
   * tool's own failure; rejects with `ERR_UNKNOWN_TOOL` for a name this source does not have.
   */
  async call(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<CallResult> {
    if (!this.#names.has(name)) {
      throw new PantoError('ERR_UNKNOWN_TOOL', `source '${this.name}' has no tool '${name}'`);
    }
    let root: string;
    try {
      root = this.#fixedRoot ?? (await realRoot(ctx.workspaceRoot));
    } catch {
      return { ok: false, error: `workspace root ${ctx.workspaceRoot} does not exist` };
    }
    return this.#backend.call(name, args, {
      toolCallId: ctx.toolCallId,
      root,
      signal: ctx.signal,
      update: ctx.update,
    });
  }

  /**
   * Convenience for a host calling a tool directly (no agent): builds the `ToolContext` (`workspaceRoot` defaults to
   * the source's root, else the current directory). Arguments are NOT validated against the schema here (use
   * `dispatchToolCalls` for that).
   */
  run(name: string, args: Record<string, unknown> = {}, options: LuaRunOptions = {}): Promise<CallResult> {
    const ctx: ToolContext = {
      signal: options.signal ?? new AbortController().signal,
      workspaceRoot: options.workspaceRoot ?? this.#fixedRoot ?? process.cwd(),
      toolCallId: options.toolCallId ?? `run-${++runCounter}`,
      update: options.update ?? (() => {}),
    };
    return this.call(name, args, ctx);
  }

  /** Stop the worker (with `isolation: 'worker'`); later calls fail. A no-op for `'thread'`. Idempotent. */
  close(): Promise<void> {
    return this.#backend.close();
  }
}

const invalid = (message: string): never => {
  throw new PantoError('ERR_INVALID_ARGUMENT', message);
};

function positive(name: string, v: unknown): void {
  if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)) {
    invalid(`${name} must be a positive number, got ${String(v)}`);
  }
}

function stringList(name: string, v: unknown): void {
  if (v !== undefined && (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))) {
    invalid(`${name} must be a list of strings`);
  }
}

/** The `exec` option checked and copied as plain data. Throws `ERR_INVALID_ARGUMENT`. */
function checkExecOptions(o: ExecOptions | undefined): ExecOptions | undefined {
  if (o === undefined) return undefined;
  if (o === null || typeof o !== 'object') return invalid('exec must be an object');
  positive('exec.timeoutMs', o.timeoutMs);
  positive('exec.maxOutputBytes', o.maxOutputBytes);
  stringList('exec.passEnv', o.passEnv);
  if (o.env !== undefined) {
    if (
      o.env === null ||
      typeof o.env !== 'object' ||
      Object.values(o.env).some((v) => typeof v !== 'string')
    ) {
      invalid('exec.env must map names to strings');
    }
  }
  return {
    ...(o.passEnv === undefined ? {} : { passEnv: [...o.passEnv] }),
    ...(o.env === undefined ? {} : { env: { ...o.env } }),
    ...(o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs }),
    ...(o.maxOutputBytes === undefined ? {} : { maxOutputBytes: o.maxOutputBytes }),
  };
}

/** The `fetch` option checked and copied as plain data. Throws `ERR_INVALID_ARGUMENT`. */
function checkFetchOptions(o: FetchOptions | undefined): FetchOptions | undefined {
  if (o === undefined) return undefined;
  if (o === null || typeof o !== 'object') return invalid('fetch must be an object');
  positive('fetch.timeoutMs', o.timeoutMs);
  positive('fetch.maxBytes', o.maxBytes);
  stringList('fetch.allowHosts', o.allowHosts);
  stringList('fetch.privateHosts', o.privateHosts);
  stringList('fetch.privateRanges', o.privateRanges);
  try {
    new AddressRules(o);
  } catch (err) {
    invalid(`fetch.privateRanges: ${(err as Error).message}`);
  }
  return {
    ...(o.allowHosts === undefined ? {} : { allowHosts: [...o.allowHosts] }),
    ...(o.privateHosts === undefined ? {} : { privateHosts: [...o.privateHosts] }),
    ...(o.privateRanges === undefined ? {} : { privateRanges: [...o.privateRanges] }),
    ...(o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs }),
    ...(o.maxBytes === undefined ? {} : { maxBytes: o.maxBytes }),
  };
}

function checkApproval(v: ApprovalPolicy | undefined): ApprovalPolicy {
  if (v === undefined) return 'auto';
  if (v !== 'auto' && v !== 'declared' && v !== 'none') {
    return invalid(`approval must be 'auto', 'declared' or 'none', got ${String(v)}`);
  }
  return v;
}
