import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PantoError } from '../errors.js';
import { MediaError } from './media-error.js';
import type { ResolvedProcessOptions } from './policy.js';

/** Header facts as the addon reports them. */
export interface NativeMediaInfo {
  mediaType: string;
  width: number;
  height: number;
  frames: number;
  hasAlpha: boolean;
  orientation: number;
}

/** Options as the addon accepts them: resolved by src/media/policy.ts (every field present; the addon asserts). */
export type NativeProcessOptions = ResolvedProcessOptions;

export interface NativeProcessResult {
  /** A fresh Buffer owned by the caller (external memory from the addon, or a copy of the input on pass-through). */
  data: Buffer;
  mediaType: string;
  width: number;
  height: number;
  original: NativeMediaInfo;
  byteLength: number;
  changes: string[];
}

/** The addon's exports (native/binding/addon.cpp). */
export interface NativeAddon {
  sniff(bytes: Uint8Array): string | null;
  probe(bytes: Uint8Array): NativeMediaInfo | null;
  /** Copies `bytes` before returning. Rejects with code ERR_MEDIA_BUSY when the memory pool is full (retry later). */
  process(
    bytes: Uint8Array,
    options: NativeProcessOptions,
    abortToken?: unknown,
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

interface RawAddon extends NativeAddon {
  init(errorClass: typeof MediaError): void;
}

let addon: NativeAddon | undefined;
let loadFailure: PantoError | undefined;

function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'libpanto')
      return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('libpanto package root not found');
    dir = up;
  }
}

/**
 * The native addon, loaded once through node-gyp-build (build/Release, then prebuilds/). Throws a `PantoError` with
 * code `ERR_NATIVE_UNAVAILABLE` (naming the cause and the fix) when no binary for this platform can load.
 */
export function loadNativeAddon(): NativeAddon {
  if (addon) return addon;
  if (loadFailure) throw loadFailure;
  try {
    const require = createRequire(import.meta.url);
    const nodeGypBuild = require('node-gyp-build') as (dir: string) => RawAddon;
    const raw = nodeGypBuild(packageRoot());
    raw.init(MediaError);
    addon = raw;
    return raw;
  } catch (cause) {
    loadFailure = new PantoError(
      'ERR_NATIVE_UNAVAILABLE',
      `libpanto's native media addon cannot load on ${process.platform}-${process.arch} (Node ${process.versions.node}): ` +
        `${cause instanceof Error ? cause.message : String(cause)}. Install a prebuilt package for this platform or ` +
        'build it with `npm run build:native` (needs a C++ compiler, make and python3).',
      { cause },
    );
    throw loadFailure;
  }
}
