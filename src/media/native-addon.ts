import { createRequire } from 'node:module';
import { join } from 'node:path';
import { PantoError } from '../errors.js';
import { packageRoot } from '../package-root.js';
import type { MediaBackend, NativeAddon } from './addon-types.js';
import { MediaError } from './media-error.js';
import { createWasmAddon, wasmBuildFiles } from './wasm-addon.js';

export type {
  MediaBackend,
  NativeAddon,
  NativeMediaInfo,
  NativeProcessOptions,
  NativeProcessResult,
} from './addon-types.js';

/** The environment variable that picks the media backend: `native`, `wasm`, or unset / `auto`. */
export const MEDIA_BACKEND_ENV = 'PANTO_MEDIA_BACKEND';

interface RawAddon extends NativeAddon {
  init(errorClass: typeof MediaError): void;
}

let addon: { backend: MediaBackend; impl: NativeAddon } | undefined;
let loadFailure: PantoError | undefined;

const platform = () => `${process.platform}-${process.arch} (Node ${process.versions.node})`;
/** A cause as one line (node-gyp-build's message spans several). */
const reason = (cause: unknown) =>
  (cause instanceof Error ? cause.message : String(cause)).replace(/\s*\n\s*/g, ' ').trim();

/** The Node-API addon through node-gyp-build (build/Release, then prebuilds/<platform>-<arch>/). Throws its cause. */
export function loadNativeOnly(root = packageRoot()): NativeAddon {
  const require = createRequire(import.meta.url);
  const nodeGypBuild = require('node-gyp-build') as (dir: string) => RawAddon;
  const raw = nodeGypBuild(root);
  raw.init(MediaError);
  return raw;
}

/**
 * The WebAssembly build of the core (prebuilds/wasm32/, from `npm run build:wasm`) behind the addon's contract.
 * Throws a plain Error naming what is missing when the build is absent.
 */
export function loadWasmOnly(root = packageRoot()): NativeAddon {
  const files = wasmBuildFiles(root);
  if (!files) {
    throw new Error(
      `no WebAssembly build in ${join(root, 'prebuilds', 'wasm32')} (build it with \`npm run build:wasm\`)`,
    );
  }
  return createWasmAddon(files);
}

function requestedBackend(): MediaBackend | 'auto' {
  const v = (process.env[MEDIA_BACKEND_ENV] ?? '').trim().toLowerCase();
  if (v === '' || v === 'auto') return 'auto';
  if (v === 'native' || v === 'wasm') return v;
  throw new PantoError(
    'ERR_INVALID_ARGUMENT',
    `${MEDIA_BACKEND_ENV} must be 'native', 'wasm' or 'auto' (or unset), got '${process.env[MEDIA_BACKEND_ENV]}'`,
  );
}

function select(): { backend: MediaBackend; impl: NativeAddon } {
  const wanted = requestedBackend();
  const root = packageRoot();
  if (wanted === 'wasm') {
    try {
      return { backend: 'wasm', impl: loadWasmOnly(root) };
    } catch (cause) {
      throw new PantoError(
        'ERR_NATIVE_UNAVAILABLE',
        `${MEDIA_BACKEND_ENV}=wasm, but libpanto's WebAssembly media build cannot load on ${platform()}: ` +
          `${reason(cause)}.`,
        { cause },
      );
    }
  }
  let nativeCause: unknown;
  try {
    return { backend: 'native', impl: loadNativeOnly(root) };
  } catch (cause) {
    nativeCause = cause;
  }
  const fix =
    'Install a prebuilt package for this platform or build it with `npm run build:native` (needs a C++ compiler, ' +
    'make and python3)';
  if (wanted === 'native') {
    throw new PantoError(
      'ERR_NATIVE_UNAVAILABLE',
      `libpanto's native media addon cannot load on ${platform()}: ${reason(nativeCause)}. ${fix}.`,
      { cause: nativeCause },
    );
  }
  let impl: NativeAddon;
  try {
    impl = loadWasmOnly(root);
  } catch (wasmCause) {
    throw new PantoError(
      'ERR_NATIVE_UNAVAILABLE',
      `libpanto's native media addon cannot load on ${platform()}: ${reason(nativeCause)}; and the WebAssembly ` +
        `fallback cannot load either: ${reason(wasmCause)}. ${fix}.`,
      { cause: nativeCause },
    );
  }
  process.stderr.write(
    `libpanto: no native media addon for ${platform()} (${reason(nativeCause)}); using the ` +
      `WebAssembly build (same results, about 2x slower). Set ${MEDIA_BACKEND_ENV}=wasm to choose it without this ` +
      'notice.\n',
  );
  return { backend: 'wasm', impl };
}

function load(): { backend: MediaBackend; impl: NativeAddon } {
  if (addon) return addon;
  if (loadFailure) throw loadFailure;
  try {
    addon = select();
    return addon;
  } catch (err) {
    loadFailure =
      err instanceof PantoError
        ? err
        : new PantoError('ERR_NATIVE_UNAVAILABLE', `libpanto's media backend cannot load: ${reason(err)}`, {
            cause: err,
          });
    throw loadFailure;
  }
}

/**
 * The media backend, loaded once. Selection (env `PANTO_MEDIA_BACKEND`):
 * - unset or `auto`: the Node-API addon through node-gyp-build (build/Release, then prebuilds/); when none loads,
 *   the WebAssembly build (prebuilds/wasm32/), announced by ONE line on stderr, once per process, starting
 *   `libpanto: no native media addon` (a host that wants it elsewhere sets `PANTO_MEDIA_BACKEND=wasm`, which selects
 *   the same build silently, and logs `mediaBackend()` itself).
 * - `native`: the addon only. `wasm`: the WebAssembly build only (no warning).
 * Throws a `PantoError` with code `ERR_NATIVE_UNAVAILABLE` (naming each cause and the fix) when no backend can load,
 * or `ERR_INVALID_ARGUMENT` for any other value of the variable; the failure is remembered.
 */
export function loadNativeAddon(): NativeAddon {
  return load().impl;
}

/**
 * Which implementation serves `sniffMedia` / `probeMedia` / `processMedia` in this process: `'native'` (the
 * Node-API addon) or `'wasm'` (the WebAssembly build of the same core). Loads the backend on first use; throws like
 * the media functions do when none can load.
 */
export function mediaBackend(): MediaBackend {
  return load().backend;
}
