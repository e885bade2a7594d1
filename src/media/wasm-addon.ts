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

/** Integer options and their ranges, exactly as native/binding/addon.cpp checks them (same messages). */
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
 *   past 256 MiB are retired after their job.
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
    createCore(gluePath: string, module: CompiledWasm): WasmCore & { broken: boolean };
  };
  let core = createCore(files.gluePath, module);
  const pool = new WasmPool(files.workerPath, files.gluePath, module);

  /** The main-thread instance; replaced after a trap. */
  const live = () => {
    if (core.broken) core = createCore(files.gluePath, module);
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
    sniff(bytes) {
      checkBytes(bytes);
      return sync((c) => c.sniff(bytes));
    },

    probe(bytes) {
      checkBytes(bytes);
      const r = sync((c) => c.probe(bytes));
      if (r.kind === 'null') return null;
      if (r.kind !== 'ok') throw toError(r);
      return r.info satisfies NativeMediaInfo;
    },

    process(bytes, options) {
      checkBytes(bytes);
      const resolved = checkOptions(options);
      const byteLength = bytes.length;
      return pool.run(bytes, resolved).then((r) => toProcessResult(r, byteLength));
    },

    decodeToRgba(bytes, maxPixels) {
      checkBytes(bytes);
      const cap = checkInteger(maxPixels, 'maxPixels', 1, MAX_SAFE);
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

function checkInteger(v: unknown, key: string, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number') throw invalid(`${key} must be a number`);
  if (!(v >= min && v <= max) || !Number.isInteger(v))
    throw invalid(`${key} must be an integer in [${min}, ${max}]`);
  return v;
}

/** The binding's parse_options in JS: undefined keys keep the core's defaults. */
function checkOptions(options: unknown): NativeProcessOptions {
  const out: NativeProcessOptions = {};
  if (options === undefined || options === null) return out;
  if (typeof options !== 'object' && typeof options !== 'function')
    throw invalid('options must be an object');
  const o = options as Record<string, unknown>;
  for (const [key, min, max] of INTEGER_OPTIONS) {
    const v = checkInteger(o[key], key, min, max);
    if (v !== undefined) out[key] = v;
  }
  const keep = o.keepMetadata;
  if (keep !== undefined) {
    if (typeof keep !== 'boolean') throw invalid('keepMetadata must be a boolean');
    out.keepMetadata = keep;
  }
  const hint = o.mediaTypeHint;
  if (hint !== undefined) {
    if (typeof hint !== 'string') throw invalid('mediaTypeHint must be a string');
    out.mediaTypeHint = hint;
  }
  const format = o.format;
  if (format !== undefined) {
    if (format !== 'auto' && format !== 'jpeg' && format !== 'png' && format !== 'webp')
      throw invalid("format must be 'auto', 'jpeg', 'png' or 'webp'");
    out.format = format;
  }
  return out;
}
