import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type {
  NativeAddon,
  NativeMediaInfo,
  NativeProcessOptions,
  NativeProcessResult,
} from './addon-types.js';
import { MediaError } from './media-error.js';
import {
  type CompiledWasm,
  createMemoryPool,
  createSlotWords,
  WasmAbortToken,
  WasmPool,
  type WasmProcessOutcome,
  type WasmRawFailure,
  type WasmRawInfo,
} from './wasm-pool.js';

/** Where the WebAssembly build lives inside the package (built by scripts/build-wasm.sh, shipped in `files`). */
export const WASM_BUILD_DIR = join('prebuilds', 'wasm32');

/** The files of the wasm backend under a package root, or `undefined` when the build is absent. */
export function wasmBuildFiles(
  root: string,
): { gluePath: string; wasmPath: string; corePath: string; workerPath: string } | undefined {
  const gluePath = join(root, WASM_BUILD_DIR, 'panto-media.cjs');
  const wasmPath = join(root, WASM_BUILD_DIR, 'panto-media.wasm');
  const corePath = join(root, 'native', 'wasm', 'wasm-core.cjs');
  const workerPath = join(root, 'native', 'wasm', 'wasm-worker.cjs');
  if (![gluePath, wasmPath, corePath, workerPath].every((p) => existsSync(p))) return undefined;
  return { gluePath, wasmPath, corePath, workerPath };
}

/** The synchronous face of native/wasm/wasm-core.cjs (one instance on the calling thread). */
interface WasmCore {
  defaultMemoryCap(): number;
  sniff(bytes: Uint8Array): string | null;
  probe(bytes: Uint8Array): { kind: 'ok'; info: WasmRawInfo } | WasmRawFailure | { kind: 'null' };
  decodeToRgba(
    bytes: Uint8Array,
    maxPixels: number | undefined,
  ): { kind: 'ok'; width: number; height: number; data: ArrayBuffer } | WasmRawFailure;
}

/**
 * The global `WebAssembly` (Node has it; this project's TS lib set has no typings for it). Only compilation is used
 * here; the glue instantiates.
 */
const WasmApi = (
  globalThis as unknown as { WebAssembly: { Module: new (bytes: Uint8Array) => CompiledWasm } }
).WebAssembly;

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** Integer options and their ranges, in the order native/binding/addon.cpp's parse_options asserts them. */
const INTEGER_OPTIONS = [
  ['maxDimension', 1, 65535],
  ['maxEncodedBytes', 1, MAX_SAFE],
  ['maxPixels', 1, MAX_SAFE],
  ['maxInputBytes', 1, MAX_SAFE],
  ['maxPdfBytes', 1, MAX_SAFE],
  ['jpegQuality', 1, 100],
] as const;

/**
 * The media backend on the WebAssembly build of the same C++ core (scripts/build-wasm.sh), behind the native
 * addon's contract: same results, same `MediaError` codes and messages, same argument checks.
 *
 * - `sniff`, `probe` and `decodeToRgba` are synchronous and run on the calling thread (header work; decodeToRgba is
 *   test-only), on one instance created here.
 * - `process` runs in a pool of worker threads (src/media/wasm-pool.ts), so pixel work never blocks the event loop;
 *   the input is copied when the call is made (the caller may reuse its buffer at once). Workers whose memory grew
 *   past 256 MiB are retired after their job. Options are RESOLVED ones (src/media/policy.ts), asserted here with
 *   the binding's messages.
 * - Memory: one process-wide pool per backend (a SharedArrayBuffer [cap, inFlight], default cap the core's 1 GiB)
 *   that every instance of the core reserves its header-derived estimate from, with the native semantics: a call
 *   whose estimate alone exceeds the cap fails with ERR_MEDIA_TOO_LARGE, one that does not fit next to the calls in
 *   flight with ERR_MEDIA_BUSY (processMedia retries). `setMemoryCap`/`memoryInFlight` read and write that pool.
 *   "Process-wide" here means every call through this backend object (the native pool also spans worker_threads
 *   that load the addon; a worker_thread that loads the wasm backend has its own pool).
 * - Abort: `abortToken()` returns a WasmAbortToken; `abort(token)` raises a shared abort word of each worker running
 *   a job holding it, which the core polls between rows, scans and stages (like the native flag): the call rejects
 *   with ERR_ABORTED. Workers are not terminated (their instance stays warm); a queued job starts aborted.
 * - A trap of the wasm instance (a bug in the core) rejects that call with `MediaError` ERR_INTERNAL, and the
 *   instance is replaced; it never takes the process down.
 * Throws (from the factory) when the build cannot be compiled or instantiated on this Node.
 */
export function createWasmAddon(files: {
  gluePath: string;
  wasmPath: string;
  corePath: string;
  workerPath: string;
}): NativeAddon {
  const module = new WasmApi.Module(readFileSync(files.wasmPath));
  const { createCore } = createRequire(import.meta.url)(files.corePath) as {
    createCore(
      gluePath: string,
      module: CompiledWasm,
      host: { pool: BigInt64Array; reserved: BigInt64Array; abort: Int32Array },
    ): WasmCore & { broken: boolean };
  };
  // The pool starts with a placeholder cap, set to the core's own default as soon as the first instance exists.
  const memory = createMemoryPool(1);
  const poolWords = new BigInt64Array(memory);
  const own = createSlotWords();
  const host = { pool: poolWords, reserved: own.reserved, abort: own.abort };
  let core = createCore(files.gluePath, module, host);
  Atomics.store(poolWords, 0, BigInt(core.defaultMemoryCap()));
  const pool = new WasmPool(files.workerPath, files.gluePath, module, memory);

  /** The main-thread instance; replaced after a trap. */
  const live = () => {
    if (core.broken) core = createCore(files.gluePath, module, host);
    return core;
  };

  const sync = <T>(fn: (c: WasmCore) => T): T => {
    try {
      return fn(live());
    } catch (cause) {
      throw Object.assign(
        new MediaError('ERR_INTERNAL', cause instanceof Error ? cause.message : String(cause)),
        { cause },
      );
    }
  };

  return {
    sniff(given) {
      checkBytes(given);
      const bytes = readable(given);
      return sync((c) => c.sniff(bytes));
    },

    probe(given) {
      checkBytes(given);
      const bytes = readable(given);
      const r = sync((c) => c.probe(bytes));
      if (r.kind === 'null') return null;
      if (r.kind !== 'ok') throw toError(r);
      return r.info satisfies NativeMediaInfo;
    },

    process(given, options, token) {
      checkBytes(given);
      const bytes = readable(given);
      const resolved = checkOptions(options);
      const abortable = token === undefined ? undefined : checkToken(token);
      // Refuse an oversized input before copying it, as the binding does (same message, same sniffed type).
      const limit = Math.max(resolved.maxInputBytes, resolved.maxPdfBytes);
      if (bytes.length > limit) {
        const t = sync((c) => c.sniff(bytes)) ?? undefined;
        const cap = t === 'application/pdf' ? resolved.maxPdfBytes : resolved.maxInputBytes;
        throw new MediaError(
          'ERR_MEDIA_TOO_LARGE',
          `input is ${bytes.length} bytes; the limit is ${cap} bytes`,
          t,
        );
      }
      const byteLength = bytes.length;
      return pool.run(bytes, resolved, abortable).then((r) => toProcessResult(r, byteLength));
    },

    abortToken() {
      return new WasmAbortToken();
    },

    abort(token) {
      pool.abort(checkToken(token));
    },

    setMemoryCap(bytes) {
      const cap = integerArg(bytes, 'bytes', 1, MAX_SAFE);
      return Number(Atomics.exchange(poolWords, 0, BigInt(cap)));
    },

    memoryInFlight() {
      return Number(Atomics.load(poolWords, 1));
    },

    decodeToRgba(bytes, maxPixels) {
      checkBytes(bytes);
      const cap = maxPixels === undefined ? undefined : integerArg(maxPixels, 'maxPixels', 1, MAX_SAFE);
      const r = sync((c) => c.decodeToRgba(bytes, cap));
      if (r.kind !== 'ok') throw toError(r);
      return { width: r.width, height: r.height, data: Buffer.from(r.data) };
    },
  };
}

function toProcessResult(r: WasmProcessOutcome, byteLength: number): NativeProcessResult {
  if (r.kind !== 'ok') throw toError(r);
  return {
    data: Buffer.from(r.data),
    mediaType: r.mediaType,
    width: r.width,
    height: r.height,
    original: r.original,
    changes: r.changes,
    byteLength,
  };
}

function toError(r: WasmRawFailure): MediaError {
  if (r.kind === 'trap') return new MediaError('ERR_INTERNAL', r.message);
  // The core's codes are the stable JS codes (native/core/media-core.h).
  return new MediaError(r.code as MediaError['code'], r.message, r.mediaType);
}

function invalid(message: string): MediaError {
  return new MediaError('ERR_INVALID_ARGUMENT', message);
}

function checkBytes(bytes: unknown): asserts bytes is Uint8Array {
  if (!(bytes instanceof Uint8Array)) throw invalid('bytes must be a Buffer or Uint8Array');
}

const EMPTY = new Uint8Array(0);

/**
 * The bytes the core reads: a view of a detached ArrayBuffer (length 0, and copying it throws a TypeError) is the
 * empty input, as on the native addon (which reads a detached view as zero bytes).
 */
function readable(bytes: Uint8Array): Uint8Array {
  return bytes.byteLength === 0 ? EMPTY : bytes;
}

/** The binding's describe(): how an asserted value is named in ERR_INVALID_ARGUMENT messages. */
function describe(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (v === null) return 'null';
  if (typeof v === 'number') {
    if (Number.isInteger(v) && Math.abs(v) <= MAX_SAFE) return String(v);
    if (Number.isNaN(v)) return 'nan';
    if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
    return v.toFixed(6); // std::to_string(double) prints %f
  }
  if (typeof v === 'string') return `'${v}'`;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return 'a non-primitive value';
}

/** The binding's integer_arg: an integer in [min, max], else ERR_INVALID_ARGUMENT naming key, range and value. */
function integerArg(v: unknown, key: string, min: number, max: number): number {
  if (typeof v !== 'number' || !(v >= min && v <= max) || !Number.isInteger(v))
    throw invalid(`${key}: expected an integer in [${min}, ${max}], got ${describe(v)}`);
  return v;
}

function checkToken(token: unknown): WasmAbortToken {
  if (!(token instanceof WasmAbortToken))
    throw invalid(`token: expected a value from abortToken(), got ${describe(token)}`);
  return token;
}

/** The binding's parse_options in JS: every field of the resolved options asserted, in the binding's order. */
function checkOptions(options: unknown): NativeProcessOptions {
  if ((typeof options !== 'object' && typeof options !== 'function') || options === null)
    throw invalid(`options: expected resolved processing options (an object), got ${describe(options)}`);
  const o = options as Record<string, unknown>;
  const ints = {} as Record<(typeof INTEGER_OPTIONS)[number][0], number>;
  for (const [key, min, max] of INTEGER_OPTIONS) ints[key] = integerArg(o[key], key, min, max);
  const keepMetadata = o.keepMetadata;
  if (typeof keepMetadata !== 'boolean')
    throw invalid(`keepMetadata: expected a boolean, got ${describe(keepMetadata)}`);
  const hint = o.mediaTypeHint;
  if (hint !== undefined && typeof hint !== 'string')
    throw invalid(`mediaTypeHint: expected a string, got ${describe(hint)}`);
  const format = o.format;
  if (format !== 'auto' && format !== 'jpeg' && format !== 'png' && format !== 'webp')
    throw invalid(`format: expected 'auto', 'jpeg', 'png' or 'webp', got ${describe(format)}`);
  const out: NativeProcessOptions = { ...ints, keepMetadata, format };
  if (hint !== undefined) out.mediaTypeHint = hint;
  return out;
}
