/**
 * `isolation: 'worker'`: the Lua VM in a `worker_threads` Worker.
 *
 * - `resourceLimits` bound the worker's V8 heap; fengari's own accounting (`memoryBytes`) bounds what Lua allocates,
 *   including string bytes, which live in ArrayBuffers that V8's heap limit does not count.
 * - A watchdog: the worker sends a heartbeat every `heartbeatMs`. When calls are in flight and no heartbeat came for
 *   `watchdogMs`, the worker's event loop is stuck (a library function the budgets could not interrupt): the worker is
 *   terminated, every call in flight resolves to a tool error saying so, and the next call starts a fresh worker
 *   (which loads the tools again). The same happens when the worker dies (e.g. its heap limit was reached).
 * - Calls, aborts, progress updates and log entries cross as messages (worker-protocol.ts); media bytes are
 *   transferred, not copied a second time.
 */

import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { PantoError } from '../errors.js';
import { packagePath } from '../package-root.js';
import type { ToolDecl } from '../tool.js';
import type { CallResult } from '../tool-source.js';
import { type HostFunction, type HostOutcome, type HostValue, runHostFunction } from './host-functions.js';
import type { LuaLogger } from './lua-log.js';
import type { LuaLoadError, RunContext } from './lua-runtime.js';
import type { ResolvedSourceOptions } from './resolved-source-options.js';
import type { ToolBackend } from './thread-backend.js';
import type { ParentMessage, WorkerMessage } from './worker-protocol.js';

/** Settings of `isolation: 'worker'`. */
export interface WorkerOptions {
  /** V8 old-generation heap limit of the worker, in MB. Default 512. */
  maxOldGenerationSizeMb?: number;
  /**
   * Terminate the worker when its event loop has not answered for this long while calls run. Default: the larger of
   * 5,000 ms and twice `budgets.maxBlockingMs` (a library function may legitimately block that long).
   */
  watchdogMs?: number;
}

interface Pending {
  resolve: (r: CallResult) => void;
  update: RunContext['update'];
  detach: () => void;
  /** What a host function's context is made from. */
  name: string;
  toolCallId: string;
  root: string;
  signal: AbortSignal | undefined;
  /** Host function calls of this call still running, by id: aborted when the call ends. */
  hostCalls: Map<number, AbortController> | null;
}

interface Live {
  worker: Worker;
  ready: Promise<{ decls: ToolDecl[]; loadErrors: LuaLoadError[] }>;
  lastBeat: number;
  dead: string | null;
}

const HEARTBEAT_MS = 50;

/**
 * The built worker script, dist/lua/lua-worker.js (a bundle entry). The TypeScript sources (tests) use it too: a
 * worker thread cannot run the .ts file.
 */
function workerScript(): string {
  const built = packagePath('dist', 'lua', 'lua-worker.js');
  if (existsSync(built)) return built;
  throw new PantoError(
    'ERR_TOOL_LOAD',
    'the Lua worker script is missing (build the package: npm run build:ts)',
  );
}

export class WorkerBackend implements ToolBackend {
  readonly #opts: ResolvedSourceOptions;
  readonly #log: LuaLogger;
  readonly #hostFunctions: Readonly<Record<string, HostFunction>>;
  /** Host function calls in flight, by id (across calls): `hostCancel` aborts one. */
  readonly #hostCalls = new Map<number, AbortController>();
  readonly #maxOldMb: number;
  readonly #watchdogMs: number;
  readonly #pending = new Map<number, Pending>();
  /** One abort listener per signal (many calls of one turn share a signal), fanning out to its calls. */
  readonly #bySignal = new Map<AbortSignal, { ids: Set<number>; listener: () => void }>();
  #live: Live | null = null;
  #nextId = 1;
  #closed = false;
  /** Times the worker was replaced after a failure (for tests and monitoring). */
  restarts = 0;
  readonly #watchdog: NodeJS.Timeout;

  private constructor(
    opts: ResolvedSourceOptions,
    log: LuaLogger,
    options: WorkerOptions,
    hostFunctions: Readonly<Record<string, HostFunction>>,
  ) {
    this.#opts = opts;
    this.#log = log;
    this.#hostFunctions = hostFunctions;
    this.#maxOldMb = options.maxOldGenerationSizeMb ?? 512;
    this.#watchdogMs = options.watchdogMs ?? Math.max(5000, 2 * opts.budgets.maxBlockingMs);
    for (const [k, v] of Object.entries({
      maxOldGenerationSizeMb: this.#maxOldMb,
      watchdogMs: this.#watchdogMs,
    })) {
      if (!Number.isFinite(v) || v <= 0) {
        throw new PantoError(
          'ERR_INVALID_ARGUMENT',
          `worker.${k} must be a positive number, got ${String(v)}`,
        );
      }
    }
    this.#watchdog = setInterval(() => this.#checkWatchdog(), Math.min(100, this.#watchdogMs / 2));
    this.#watchdog.unref();
  }

  /** Start the worker and load the tools in it. Throws `ERR_TOOL_LOAD` when the worker cannot start. */
  static async start(
    opts: ResolvedSourceOptions,
    log: LuaLogger,
    options: WorkerOptions,
    hostFunctions: Readonly<Record<string, HostFunction>> = {},
  ): Promise<{ backend: WorkerBackend; decls: ToolDecl[]; loadErrors: LuaLoadError[] }> {
    const backend = new WorkerBackend(opts, log, options, hostFunctions);
    try {
      const live = backend.#spawn();
      const { decls, loadErrors } = await live.ready;
      return { backend, decls, loadErrors };
    } catch (err) {
      await backend.close();
      throw err instanceof PantoError
        ? err
        : new PantoError('ERR_TOOL_LOAD', `the Lua worker did not start: ${(err as Error).message}`, {
            cause: err,
          });
    }
  }

  #spawn(): Live {
    const worker = new Worker(workerScript(), {
      workerData: { opts: this.#opts, heartbeatMs: HEARTBEAT_MS },
      resourceLimits: { maxOldGenerationSizeMb: this.#maxOldMb },
      stdout: true,
      stderr: true,
    });
    worker.unref();
    let settle: {
      resolve: (v: { decls: ToolDecl[]; loadErrors: LuaLoadError[] }) => void;
      reject: (e: Error) => void;
    };
    const ready = new Promise<{ decls: ToolDecl[]; loadErrors: LuaLoadError[] }>((resolve, reject) => {
      settle = { resolve, reject };
    });
    ready.catch(() => {});
    const live: Live = { worker, ready, lastBeat: performance.now(), dead: null };
    worker.on('message', (m: WorkerMessage) => {
      live.lastBeat = performance.now();
      switch (m.type) {
        case 'ready':
          settle.resolve({ decls: m.decls, loadErrors: m.loadErrors });
          break;
        case 'fatal':
          settle.reject(new PantoError('ERR_TOOL_LOAD', m.message));
          break;
        case 'log':
          this.#log(m.entry);
          break;
        case 'update':
          this.#pending.get(m.id)?.update?.(m.update);
          break;
        case 'result': {
          const p = this.#pending.get(m.id);
          if (p) {
            this.#pending.delete(m.id);
            this.#endHostCalls(p);
            p.detach();
            this.#refresh();
            p.resolve(m.result);
          }
          break;
        }
        case 'host':
          this.#runHost(worker, m.id, m.hid, m.name, m.args);
          break;
        case 'hostCancel':
          this.#hostCalls.get(m.hid)?.abort(new Error('the tool call stopped waiting'));
          break;
        case 'beat':
          break;
      }
    });
    const die = (reason: string) => {
      if (live.dead !== null) return;
      live.dead = reason;
      settle.reject(new PantoError('ERR_TOOL_LOAD', reason));
      if (this.#live === live) this.#live = null;
      this.#failAll(reason);
    };
    worker.on('error', (err: Error & { code?: string }) => {
      die(
        err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `the Lua worker ran out of memory (its V8 heap limit is ${this.#maxOldMb} MB) and was restarted`
          : `the Lua worker failed: ${err.message}`,
      );
    });
    worker.on('exit', (code) => die(`the Lua worker exited (code ${code})`));
    this.#live = live;
    return live;
  }

  #failAll(reason: string): void {
    const all = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of all) {
      this.#endHostCalls(p);
      p.detach();
      p.resolve({ ok: false, error: reason });
    }
    this.#refresh();
  }

  /**
   * Run host function `name` for call `id` on this thread and post the outcome to `worker` (its bytes copied once
   * and transferred). The context's signal aborts when the call is aborted or ends, or the worker stops waiting.
   */
  #runHost(worker: Worker, id: number, hid: number, name: string, args: HostValue): void {
    const p = this.#pending.get(id);
    const fn = this.#hostFunctions[name];
    const reply = (outcome: HostOutcome, transfer: ArrayBuffer[] = []) => {
      try {
        worker.postMessage({ type: 'hostResult', hid, outcome } satisfies ParentMessage, transfer);
      } catch {
        // The worker is gone (terminated or restarted): nobody waits for the answer.
      }
    };
    if (p === undefined || fn === undefined) {
      reply({ ok: false, error: p === undefined ? 'the tool call ended' : `no host function '${name}'` });
      return;
    }
    const controller = new AbortController();
    const onAbort = () => controller.abort(new Error('the tool call was aborted'));
    p.signal?.addEventListener('abort', onAbort, { once: true });
    if (p.signal?.aborted) onAbort();
    p.hostCalls ??= new Map();
    p.hostCalls.set(hid, controller);
    this.#hostCalls.set(hid, controller);
    const ctx = {
      signal: controller.signal,
      toolName: p.name,
      toolCallId: p.toolCallId,
      workspaceRoot: p.root,
    };
    void Promise.resolve(runHostFunction(name, fn, args, ctx, this.#opts.budgets.maxHostValueBytes)).then(
      (r) => {
        p.signal?.removeEventListener('abort', onAbort);
        p.hostCalls?.delete(hid);
        this.#hostCalls.delete(hid);
        if (controller.signal.aborted) return; // the worker no longer waits
        if (r.ok) reply({ ok: true, value: r.value }, r.buffers);
        else reply(r);
      },
    );
  }

  /** Abort the host function calls still running for a call that ended. */
  #endHostCalls(p: Pending): void {
    if (p.hostCalls === null) return;
    for (const [hid, c] of p.hostCalls) {
      this.#hostCalls.delete(hid);
      c.abort(new Error('the tool call ended'));
    }
    p.hostCalls.clear();
  }

  /** Keep the process alive while calls are in flight; let it exit when idle. */
  #refresh(): void {
    const w = this.#live?.worker;
    if (!w) return;
    if (this.#pending.size > 0) w.ref();
    else w.unref();
  }

  #checkWatchdog(): void {
    const live = this.#live;
    if (live === null || live.dead !== null || this.#pending.size === 0) return;
    const silent = performance.now() - live.lastBeat;
    if (silent > this.#watchdogMs) {
      const reason =
        `the Lua worker stopped answering for ${Math.round(silent)} ms (a tool ran a library function that the ` +
        'budgets could not interrupt); it was terminated and will be restarted';
      this.#log({ level: 'error', message: reason });
      this.restarts++;
      live.dead = reason;
      this.#live = null;
      this.#failAll(reason);
      void live.worker.terminate();
    }
  }

  async call(name: string, args: Record<string, unknown>, ctx: RunContext): Promise<CallResult> {
    if (this.#closed) return { ok: false, error: 'the Lua tool source was closed' };
    if (ctx.signal?.aborted) return { ok: false, error: 'aborted before the tool started' };
    let live = this.#live;
    if (live === null) {
      this.restarts++;
      live = this.#spawn();
    }
    try {
      await live.ready;
    } catch (err) {
      return { ok: false, error: `the Lua worker could not start: ${(err as Error).message}` };
    }
    if (live.dead !== null) return { ok: false, error: live.dead };
    const id = this.#nextId++;
    const worker = live.worker;
    return new Promise<CallResult>((resolve) => {
      this.#pending.set(id, {
        resolve,
        update: ctx.update,
        detach: this.#watchAbort(ctx.signal, id, worker),
        name,
        toolCallId: ctx.toolCallId,
        root: ctx.root,
        signal: ctx.signal,
        hostCalls: null,
      });
      this.#refresh();
      live.lastBeat = Math.max(live.lastBeat, performance.now());
      const msg: ParentMessage = {
        type: 'call',
        id,
        name,
        args,
        toolCallId: ctx.toolCallId,
        root: ctx.root,
        wantsUpdates: ctx.update !== undefined,
      };
      try {
        worker.postMessage(msg);
      } catch (err) {
        this.#pending.delete(id);
        resolve({
          ok: false,
          error: `arguments cannot be sent to the Lua worker: ${(err as Error).message}`,
        });
      }
    });
  }

  /** Forward an abort of `signal` to call `id`; returns the function that stops watching. */
  #watchAbort(signal: AbortSignal | undefined, id: number, worker: Worker): () => void {
    if (signal === undefined) return () => {};
    let entry = this.#bySignal.get(signal);
    if (entry === undefined) {
      const ids = new Set<number>();
      const listener = () => {
        for (const i of ids) worker.postMessage({ type: 'abort', id: i } satisfies ParentMessage);
      };
      entry = { ids, listener };
      this.#bySignal.set(signal, entry);
      signal.addEventListener('abort', listener, { once: true });
    }
    const e = entry;
    e.ids.add(id);
    return () => {
      e.ids.delete(id);
      if (e.ids.size === 0) {
        signal.removeEventListener('abort', e.listener);
        this.#bySignal.delete(signal);
      }
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#watchdog);
    const live = this.#live;
    this.#live = null;
    this.#failAll('the Lua tool source was closed');
    if (live) {
      live.dead ??= 'the Lua tool source was closed';
      await live.worker.terminate();
    }
  }
}
