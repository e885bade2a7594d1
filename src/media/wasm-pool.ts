import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
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

interface Job {
  id: number;
  bytes: Uint8Array;
  options: NativeProcessOptions;
  resolve: (outcome: WasmProcessOutcome) => void;
}

interface Slot {
  worker: Worker;
  job: Job | undefined;
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
  readonly #slots = new Set<Slot>();
  readonly #queue: Job[] = [];
  #nextId = 1;
  #spawned = 0;

  /**
   * @param workerPath native/wasm/wasm-worker.cjs
   * @param gluePath prebuilds/wasm32/panto-media.cjs
   * @param module the compiled panto-media.wasm, shared by every worker
   * @param options `size`: most workers at once (default `defaultPoolSize()`); `retireHeapBytes`: retire a worker
   *   whose wasm memory grew past this after its job (default RETIRE_HEAP_BYTES)
   */
  constructor(
    workerPath: string,
    gluePath: string,
    module: CompiledWasm,
    options: { size?: number; retireHeapBytes?: number } = {},
  ) {
    this.#workerPath = workerPath;
    this.#gluePath = gluePath;
    this.#module = module;
    this.#size = options.size ?? defaultPoolSize();
    this.#retireHeapBytes = options.retireHeapBytes ?? RETIRE_HEAP_BYTES;
  }

  /** Processes `bytes` (copied now: the caller may reuse its buffer at once) in a worker. */
  run(bytes: Uint8Array, options: NativeProcessOptions): Promise<WasmProcessOutcome> {
    return new Promise((resolve) => {
      // A copy with its own exact-size buffer (Buffer#slice would alias, and may share Node's pool buffer).
      this.#queue.push({ id: this.#nextId++, bytes: new Uint8Array(bytes), options, resolve });
      this.#pump();
    });
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
      slot.worker.ref();
      slot.worker.postMessage({ id: job.id, bytes: job.bytes, options: job.options }, [
        job.bytes.buffer as ArrayBuffer,
      ]);
    }
  }

  #spawn(): Slot {
    const worker = new Worker(this.#workerPath, {
      workerData: { gluePath: this.#gluePath, wasmModule: this.#module },
      stdout: false,
      stderr: false,
    });
    this.#spawned++;
    const slot: Slot = { worker, job: undefined };
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
  }
}

function trap(message: string): WasmProcessOutcome {
  return { kind: 'trap', message };
}
