import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { NativeProcessOptions } from './addon-types.js';

/** A compiled `WebAssembly.Module` (opaque here; handed to workers, which instantiate it without recompiling). */
export type CompiledWasm = object;

/** Header facts as the wasm core reports them. */
export interface WasmRawInfo {
  mediaType: string;
  width: number;
  height: number;
  frames: number;
  hasAlpha: boolean;
  orientation: number;
}

/** A failure reported by the core (its Status), or a trap / dead worker (`kind: 'trap'`). */
export type WasmRawFailure =
  | { kind: 'error'; code: string; message: string; mediaType: string | undefined }
  | { kind: 'trap'; message: string };

/** What one processMedia job yields; `data` is the output (for a pass-through, the worker's copy of the input). */
export type WasmProcessOutcome =
  | {
      kind: 'ok';
      unchanged: boolean;
      data: ArrayBuffer;
      mediaType: string;
      width: number;
      height: number;
      original: WasmRawInfo;
      changes: string[];
    }
  | WasmRawFailure;

/**
 * A cancellation token of the wasm backend (what its `abortToken()` returns). `abort` marks it and raises the abort
 * word of every worker running a job that holds it; a job dispatched later starts with its word already raised.
 */
export class WasmAbortToken {
  aborted = false;
}

interface Job {
  id: number;
  bytes: Uint8Array;
  options: NativeProcessOptions;
  token: WasmAbortToken | undefined;
  resolve: (outcome: WasmProcessOutcome) => void;
}

interface Slot {
  worker: Worker;
  job: Job | undefined;
  /** Raised (1) while the running job's token is aborted; the core polls it between rows/scans/stages. */
  abortWord: Int32Array;
  /** Bytes this worker holds reserved in the memory pool right now (given back if the worker dies mid-call). */
  reserved: BigInt64Array;
}

/**
 * The process-wide memory pool of one wasm backend: a SharedArrayBuffer holding BigInt64Array [cap, inFlight],
 * shared by every instance of the core (main thread and workers), which reserve from it with the native
 * MemoryReservation's all-or-nothing compare-and-swap (native/wasm/panto-wasm.cpp).
 */
export function createMemoryPool(cap: number): SharedArrayBuffer {
  const sab = new SharedArrayBuffer(16);
  new BigInt64Array(sab)[0] = BigInt(cap);
  return sab;
}

/** A worker's (or the main thread's) own shared words: the abort word at byte 0, the reservation word at byte 8. */
export function createSlotWords(): {
  sab: SharedArrayBuffer;
  abort: Int32Array;
  reserved: BigInt64Array;
} {
  const sab = new SharedArrayBuffer(16);
  return { sab, abort: new Int32Array(sab, 0, 1), reserved: new BigInt64Array(sab, 8, 1) };
}

/**
 * Workers whose wasm memory grew past this are retired after their job: wasm memory never shrinks, and one huge
 * image should not pin hundreds of MiB per worker for the life of the process.
 */
export const RETIRE_HEAP_BYTES = 256 * 1024 * 1024;

/**
 * The default number of media workers: like the libuv threadpool the native addon runs on (UV_THREADPOOL_SIZE,
 * default 4), but never more than the machine's parallelism.
 */
export function defaultPoolSize(): number {
  const uv = Number(process.env.UV_THREADPOOL_SIZE);
  const want = Number.isInteger(uv) && uv > 0 ? uv : 4;
  return Math.max(1, Math.min(want, availableParallelism(), 64));
}

/**
 * A pool of worker threads, each with its own instance of the wasm core, that runs processMedia jobs off the main
 * thread. Workers start on demand (up to `size`), run one job at a time, take queued jobs in FIFO order, and are
 * `unref`'d while idle so an idle pool never keeps the process alive (a pending job does, as the native addon's
 * AsyncWorker does). A worker that traps, dies, or whose memory grew past RETIRE_HEAP_BYTES is replaced.
 * `run` never rejects: every failure comes back as an outcome.
 */
export class WasmPool {
  readonly #workerPath: string;
  readonly #gluePath: string;
  readonly #module: CompiledWasm;
  readonly #size: number;
  readonly #retireHeapBytes: number;
  readonly #pool: SharedArrayBuffer;
  readonly #poolWords: BigInt64Array;
  readonly #slots = new Set<Slot>();
  readonly #queue: Job[] = [];
  #nextId = 1;
  #spawned = 0;

  /**
   * @param workerPath native/wasm/wasm-worker.cjs
   * @param gluePath prebuilds/wasm32/panto-media.cjs
   * @param module the compiled panto-media.wasm, shared by every worker
   * @param pool the backend's memory pool (createMemoryPool), shared with every worker
   * @param options `size`: most workers at once (default `defaultPoolSize()`); `retireHeapBytes`: retire a worker
   *   whose wasm memory grew past this after its job (default RETIRE_HEAP_BYTES)
   */
  constructor(
    workerPath: string,
    gluePath: string,
    module: CompiledWasm,
    pool: SharedArrayBuffer,
    options: { size?: number; retireHeapBytes?: number } = {},
  ) {
    this.#workerPath = workerPath;
    this.#gluePath = gluePath;
    this.#module = module;
    this.#pool = pool;
    this.#poolWords = new BigInt64Array(pool);
    this.#size = options.size ?? defaultPoolSize();
    this.#retireHeapBytes = options.retireHeapBytes ?? RETIRE_HEAP_BYTES;
  }

  /**
   * Processes `bytes` (copied now: the caller may reuse its buffer at once) in a worker. `options` are resolved and
   * asserted by the caller; `token` makes the job abortable (`abort`).
   */
  run(bytes: Uint8Array, options: NativeProcessOptions, token?: WasmAbortToken): Promise<WasmProcessOutcome> {
    return new Promise((resolve) => {
      // A copy with its own exact-size buffer (Buffer#slice would alias, and may share Node's pool buffer).
      this.#queue.push({ id: this.#nextId++, bytes: new Uint8Array(bytes), options, token, resolve });
      this.#pump();
    });
  }

  /**
   * Aborts every job holding `token`: running ones stop at the core's next poll (ERR_ABORTED), queued ones start
   * aborted — exactly as a native call whose flag is set before or while it runs.
   */
  abort(token: WasmAbortToken): void {
    token.aborted = true;
    for (const slot of this.#slots) {
      if (slot.job?.token === token) Atomics.store(slot.abortWord, 0, 1);
    }
  }

  /** Number of live workers (for tests and diagnostics). */
  get workers(): number {
    return this.#slots.size;
  }

  /** Number of workers started so far, including retired ones (for tests and diagnostics). */
  get spawned(): number {
    return this.#spawned;
  }

  /** Terminates every worker; queued and running jobs resolve as traps. */
  async close(): Promise<void> {
    const slots = [...this.#slots];
    for (const job of this.#queue.splice(0)) job.resolve(trap('the media worker pool was closed'));
    await Promise.all(slots.map((s) => this.#retire(s, 'the media worker pool was closed')));
  }

  #pump(): void {
    while (this.#queue.length > 0) {
      let slot = [...this.#slots].find((s) => s.job === undefined);
      if (!slot) {
        if (this.#slots.size >= this.#size) return;
        slot = this.#spawn();
      }
      const job = this.#queue.shift() as Job;
      slot.job = job;
      Atomics.store(slot.abortWord, 0, job.token?.aborted ? 1 : 0);
      slot.worker.ref();
      const msg = { id: job.id, bytes: job.bytes, options: job.options, hasAbort: job.token !== undefined };
      slot.worker.postMessage(msg, [job.bytes.buffer as ArrayBuffer]);
    }
  }

  #spawn(): Slot {
    const words = createSlotWords();
    const worker = new (workerThreads().Worker)(this.#workerPath, {
      workerData: {
        gluePath: this.#gluePath,
        wasmModule: this.#module,
        pool: this.#pool,
        slot: words.sab,
      },
      stdout: false,
      stderr: false,
    });
    this.#spawned++;
    const slot: Slot = { worker, job: undefined, abortWord: words.abort, reserved: words.reserved };
    this.#slots.add(slot);
    worker.unref();
    worker.on('message', (msg: { id: number; outcome: WasmProcessOutcome; heapBytes: number }) => {
      const job = slot.job;
      if (!job || job.id !== msg.id) return;
      slot.job = undefined;
      worker.unref();
      job.resolve(msg.outcome);
      if (msg.outcome.kind === 'trap' || msg.heapBytes > this.#retireHeapBytes) {
        void this.#retire(slot, 'retired');
      }
      this.#pump();
    });
    const fail = (why: string) => {
      if (!this.#slots.has(slot)) return;
      this.#slots.delete(slot);
      this.#giveBack(slot);
      const job = slot.job;
      slot.job = undefined;
      job?.resolve(trap(`the WebAssembly media worker failed: ${why}`));
      this.#pump();
    };
    worker.on('error', (err) => fail(err instanceof Error ? err.message : String(err)));
    worker.on('exit', (code) => fail(`exited with code ${code}`));
    return slot;
  }

  async #retire(slot: Slot, why: string): Promise<void> {
    if (!this.#slots.delete(slot)) return;
    slot.job?.resolve(trap(why));
    slot.job = undefined;
    await slot.worker.terminate();
    this.#giveBack(slot);
  }

  /** Returns what a discarded worker still held reserved (a trap or termination skips the core's destructors). */
  #giveBack(slot: Slot): void {
    const held = Atomics.exchange(slot.reserved, 0, 0n);
    if (held !== 0n) Atomics.sub(this.#poolWords, 1, held);
  }
}

function trap(message: string): WasmProcessOutcome {
  return { kind: 'trap', message };
}

let threads: typeof import('node:worker_threads') | undefined;
/**
 * node:worker_threads, loaded when the first wasm worker starts: importing the media module (on the native addon,
 * which never starts one) does not load it (about 0.4 MB of a process's resident memory).
 */
function workerThreads(): typeof import('node:worker_threads') {
  threads ??= createRequire(import.meta.url)('node:worker_threads') as typeof import('node:worker_threads');
  return threads;
}
