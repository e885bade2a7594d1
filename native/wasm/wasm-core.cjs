// @ts-check
/**
 * Marshalling between JS and the WebAssembly build of the media core (the C ABI in native/wasm/panto-wasm.cpp).
 * CommonJS and plain JS so the same file serves the main thread (synchronous sniff/probe through createRequire) and
 * the media workers (native/wasm/wasm-worker.cjs), from the TypeScript sources and from dist alike.
 *
 * Contract:
 * - `createCore(gluePath, wasmModule, host)` instantiates synchronously (the glue is built with WASM_ASYNC_COMPILATION=0)
 *   from an already compiled `WebAssembly.Module`, so many instances share one compilation.
 * - Every call copies its input into linear memory and copies its output out into a fresh ArrayBuffer owned by the
 *   caller; nothing returned aliases wasm memory (which moves when it grows).
 * - Failures of the core come back as `{kind: 'error', code, message, mediaType}` (never thrown). A trap of the
 *   instance itself (a bug, or a stack overflow) throws a `WebAssembly.RuntimeError`; the instance must then be
 *   discarded (`core.broken` is true).
 * - Options handed to `process` are RESOLVED (src/media/policy.ts: every field present) and asserted by the caller
 *   (src/media/wasm-addon.ts) exactly as the Node binding asserts them.
 * - `host` (see native/wasm/panto-wasm.cpp) carries the process-wide memory pool and this instance's abort word and
 *   reservation word, all on SharedArrayBuffers: `{ pool: BigInt64Array [cap, inFlight], reserved: BigInt64Array [1],
 *   abort: Int32Array [1] }`. The core reads and updates them with Atomics.
 */

/** Word offsets of `PwView` in panto-wasm.cpp (17 little-endian 32-bit words). */
const V = {
  kind: 0,
  code: 1,
  message: 2,
  errorMime: 3,
  unchanged: 4,
  data: 5,
  size: 6,
  mime: 7,
  width: 8,
  height: 9,
  origMime: 10,
  origWidth: 11,
  origHeight: 12,
  origFrames: 13,
  origHasAlpha: 14,
  origOrientation: 15,
  changes: 16,
};

const FORMAT = { auto: 0, jpeg: 1, png: 2, webp: 3 };

/**
 * @typedef {{ mediaType: string, width: number, height: number, frames: number, hasAlpha: boolean,
 *   orientation: number }} RawInfo
 * @typedef {{ kind: 'error', code: string, message: string, mediaType: string | undefined }} RawError
 * @typedef {{ kind: 'ok', unchanged: boolean, data: ArrayBuffer | null, mediaType: string, width: number,
 *   height: number, original: RawInfo, changes: string[] }} RawProcessed
 * @typedef {{ maxDimension: number, maxEncodedBytes: number, maxPixels: number, maxInputBytes: number,
 *   maxPdfBytes: number, jpegQuality: number, keepMetadata: boolean, format: 'auto' | 'jpeg' | 'png' | 'webp',
 *   mediaTypeHint?: string }} ResolvedOptions
 * @typedef {{ pool: BigInt64Array, reserved: BigInt64Array, abort: Int32Array }} Host
 */

/**
 * @param {string} gluePath absolute path of prebuilds/wasm32/panto-media.cjs
 * @param {WebAssembly.Module} wasmModule the compiled panto-media.wasm
 * @param {Host} host the shared memory pool and this instance's words
 */
function createCore(gluePath, wasmModule, host) {
  /** @type {(m: object) => Promise<unknown>} */
  const factory = require(gluePath);
  /** @type {string[]} */
  const stderr = [];
  /** @type {any} */
  const M = {
    pantoHost: host,
    instantiateWasm(/** @type {WebAssembly.Imports} */ imports, /** @type {Function} */ receive) {
      const instance = new WebAssembly.Instance(wasmModule, imports);
      receive(instance, wasmModule);
      return instance.exports;
    },
    // The glue prints abort reasons here; keep the last few for the error message instead of writing to stderr.
    print: () => {},
    printErr: (/** @type {string} */ line) => {
      stderr.push(line);
      if (stderr.length > 8) stderr.shift();
    },
  };
  // The factory fills M synchronously; its promise only mirrors that (and would reject on an abort: keep that quiet).
  Promise.resolve(factory(M)).catch(() => {});
  if (typeof M._pw_process !== 'function' || !M.calledRun) {
    throw new Error(`the WebAssembly media core did not initialise synchronously (${stderr.join('; ')})`);
  }

  const core = {
    broken: false,

    /** The core's default process-wide memory cap (budget.h kDefaultMemoryCap). */
    defaultMemoryCap: () => /** @type {number} */ (M._pw_default_memory_cap()),

    /** Current size of linear memory (it only grows). */
    heapBytes: () => /** @type {Uint8Array} */ (M.HEAPU8).length,

    /** @param {Uint8Array} bytes @returns {string | null} */
    sniff(bytes) {
      return withInput(bytes, (ptr, len) => {
        const mime = M._pw_sniff(ptr, len);
        return mime ? M.UTF8ToString(mime) : null;
      });
    },

    /** @param {Uint8Array} bytes @returns {{kind: 'ok', info: RawInfo} | RawError | {kind: 'null'}} */
    probe(bytes) {
      return withResult(bytes, (ptr, len) => M._pw_probe(ptr, len), (w) => ({ kind: 'ok', info: info(w) }));
    },

    /**
     * @param {Uint8Array} bytes
     * @param {ResolvedOptions} o
     * @param {boolean} hasAbort the call carries an abort token (the core polls `host.abort`)
     * @returns {RawProcessed | RawError}
     */
    process(bytes, o, hasAbort) {
      let hint = 0;
      if (o.mediaTypeHint !== undefined) {
        const n = M.lengthBytesUTF8(o.mediaTypeHint) + 1;
        hint = M._pw_alloc(n);
        if (!hint) return oom();
        M.stringToUTF8(o.mediaTypeHint, hint, n);
      }
      try {
        return /** @type {RawProcessed | RawError} */ (
          withResult(
            bytes,
            (ptr, len) =>
              M._pw_process(
                ptr,
                len,
                o.maxDimension,
                o.maxEncodedBytes,
                o.maxPixels,
                o.maxInputBytes,
                o.maxPdfBytes,
                o.jpegQuality,
                o.keepMetadata ? 1 : 0,
                FORMAT[o.format],
                hint,
                hasAbort ? 1 : 0,
              ),
            (w) => {
              const unchanged = w(V.unchanged) === 1;
              const changes = str(w(V.changes));
              return {
                kind: 'ok',
                unchanged,
                data: unchanged ? null : copyOut(w(V.data), w(V.size)),
                mediaType: str(w(V.mime)),
                width: w(V.width),
                height: w(V.height),
                original: info(w),
                changes: changes ? changes.split(',') : [],
              };
            },
          )
        );
      } finally {
        if (hint) M._pw_free(hint);
      }
    },

    /**
     * @param {Uint8Array} bytes
     * @param {number | undefined} maxPixels undefined: ProcessOptions's default
     * @returns {{kind: 'ok', width: number, height: number, data: ArrayBuffer} | RawError}
     */
    decodeToRgba(bytes, maxPixels) {
      return /** @type {any} */ (
        withResult(
          bytes,
          (ptr, len) => M._pw_decode_to_rgba(ptr, len, maxPixels ?? -1),
          (w) => ({ kind: 'ok', width: w(V.width), height: w(V.height), data: copyOut(w(V.data), w(V.size)) }),
        )
      );
    },
  };

  /** @returns {RawError} */
  function oom() {
    return {
      kind: 'error',
      code: 'ERR_MEDIA_TOO_LARGE',
      message: 'out of memory in the WebAssembly media worker (wasm32 memory is limited to 4 GiB)',
      mediaType: undefined,
    };
  }

  /** @param {number} ptr */
  function str(ptr) {
    return ptr ? M.UTF8ToString(ptr) : '';
  }

  /** @param {number} ptr @param {number} size @returns {ArrayBuffer} */
  function copyOut(ptr, size) {
    const heap = /** @type {Uint8Array} */ (M.HEAPU8);
    return heap.slice(ptr, ptr + size).buffer;
  }

  /** @param {(i: number) => number} w @returns {RawInfo} */
  function info(w) {
    return {
      mediaType: str(w(V.origMime)),
      width: w(V.origWidth),
      height: w(V.origHeight),
      frames: w(V.origFrames),
      hasAlpha: w(V.origHasAlpha) === 1,
      orientation: w(V.origOrientation),
    };
  }

  /**
   * Copies `bytes` into linear memory for the duration of `fn`. A trap marks the core broken and rethrows.
   * @template T
   * @param {Uint8Array} bytes
   * @param {(ptr: number, len: number) => T} fn
   * @returns {T}
   */
  function withInput(bytes, fn) {
    if (core.broken) throw new Error('the WebAssembly media core is unusable after an earlier trap');
    const ptr = M._pw_alloc(bytes.length);
    if (!ptr) return /** @type {any} */ (oom());
    try {
      /** @type {Uint8Array} */ (M.HEAPU8).set(bytes, ptr);
      return fn(ptr, bytes.length);
    } catch (err) {
      core.broken = true;
      const detail = stderr.length ? ` (${stderr.join('; ')})` : '';
      throw Object.assign(new Error(`the WebAssembly media core trapped: ${String(err)}${detail}`), { cause: err });
    } finally {
      if (!core.broken) M._pw_free(ptr);
    }
  }

  /**
   * Runs a pw_* call returning a PwResult*, reads it with `onOk` (word reader), frees it.
   * @template T
   * @param {Uint8Array} bytes
   * @param {(ptr: number, len: number) => number} call
   * @param {(w: (i: number) => number) => T} onOk
   * @returns {T | RawError | {kind: 'null'}}
   */
  function withResult(bytes, call, onOk) {
    return withInput(bytes, (ptr, len) => {
      const r = call(ptr, len);
      if (!r) return oom();
      try {
        const w = (/** @type {number} */ i) => /** @type {Uint32Array} */ (M.HEAPU32)[(r >>> 2) + i] ?? 0;
        const kind = w(V.kind);
        if (kind === 2) return { kind: 'null' };
        if (kind === 1) {
          const mediaType = str(w(V.errorMime));
          return {
            kind: 'error',
            code: str(w(V.code)),
            message: str(w(V.message)),
            mediaType: mediaType || undefined,
          };
        }
        return onOk(w);
      } finally {
        M._pw_result_free(r);
      }
    });
  }

  return core;
}

module.exports = { createCore };
