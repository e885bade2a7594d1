import type { ResolvedProcessOptions } from './policy.js';

/** Header facts as a media backend (native addon or wasm build) reports them. */
export interface NativeMediaInfo {
  mediaType: string;
  width: number;
  height: number;
  frames: number;
  hasAlpha: boolean;
  orientation: number;
}

/** Options as a backend accepts them: resolved by src/media/policy.ts (every field present; the backend asserts). */
export type NativeProcessOptions = ResolvedProcessOptions;

export interface NativeProcessResult {
  /**
   * A fresh Buffer owned by the caller (external memory from the addon, or a copy of the input on pass-through); on
   * the pass-through of an `owned` input, a Uint8Array view of that input (processMedia wraps it as a Buffer).
   */
  data: Buffer | Uint8Array;
  mediaType: string;
  width: number;
  height: number;
  original: NativeMediaInfo;
  byteLength: number;
  changes: string[];
}

/**
 * What every media backend implements: the native addon's exports (native/binding/addon.cpp), and the WebAssembly
 * build behind the same contract (src/media/wasm-addon.ts). Same results, same `MediaError` codes and messages.
 */
export interface NativeAddon {
  sniff(bytes: Uint8Array): string | null;
  probe(bytes: Uint8Array): NativeMediaInfo | null;
  /**
   * Copies `bytes` before returning, unless `owned`: then `bytes` views memory the caller has handed over for good
   * (src/media/take-ownership.ts; nothing else reads, writes or detaches it) and the native addon reads it in place
   * until the call settles (the wasm build copies it into its memory as usual). Rejects with code ERR_MEDIA_BUSY
   * when the memory pool is full (retry later, with the same bytes).
   */
  process(
    bytes: Uint8Array,
    options: NativeProcessOptions,
    abortToken?: unknown,
    owned?: boolean,
  ): Promise<NativeProcessResult>;
  /** A cancellation token for `process`; `abort(token)` stops the calls holding it with ERR_ABORTED. */
  abortToken(): unknown;
  abort(token: unknown): void;
  /** Process-wide cap on memory reserved by calls in flight; returns the previous cap. */
  setMemoryCap(bytes: number): number;
  /** Bytes reserved now by calls in flight (all threads). */
  memoryInFlight(): number;
  /**
   * TEST/DIAGNOSTIC ONLY, not public API: synchronous first-frame decode to RGBA8 (no orientation applied) with the
   * pipeline's own decoders.
   */
  decodeToRgba(bytes: Uint8Array, maxPixels?: number): { width: number; height: number; data: Buffer };
}

/** Which implementation serves the media API: the Node-API addon, or the WebAssembly build of the same core. */
export type MediaBackend = 'native' | 'wasm';
