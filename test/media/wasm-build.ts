/**
 * Shared by the wasm-*.test.ts files: where the WebAssembly build is, and a clear word when it is absent. Those
 * tests run when prebuilds/wasm32/ exists and are skipped (with a message naming the fix) when it does not;
 * PANTO_REQUIRE_WASM=1 (set by scripts/ci-wasm.sh) turns the absence into a failure so CI never skips silently.
 */
import path from 'node:path';
import type { NativeAddon } from '../../src/media/addon-types.js';
import { loadNativeOnly, loadWasmOnly } from '../../src/media/native-addon.js';
import { wasmBuildFiles } from '../../src/media/wasm-addon.js';

export const repo = path.resolve(import.meta.dirname, '..', '..');
export const wasmFiles = wasmBuildFiles(repo);
export const wasmRequired = process.env.PANTO_REQUIRE_WASM === '1';
export const ABSENT_NOTE =
  'the WebAssembly build (prebuilds/wasm32/) is ABSENT: wasm tests skipped. Build it with `npm run build:wasm`, ' +
  'or run `npm run test:wasm` (builds it and runs the whole media suite on it).';

if (!wasmFiles && !wasmRequired) process.stderr.write(`[wasm tests] ${ABSENT_NOTE}\n`);

/**
 * The two backends to compare, loaded only when the wasm build exists: `native` is undefined when the native addon
 * cannot load here (the comparison is then skipped), `wasm` is the WebAssembly build.
 */
export function nativeAndWasm(): { native: NativeAddon | undefined; wasm: NativeAddon | undefined } {
  if (!wasmFiles) return { native: undefined, wasm: undefined };
  let native: NativeAddon | undefined;
  try {
    native = loadNativeOnly(repo);
  } catch {
    native = undefined;
  }
  return { native, wasm: loadWasmOnly(repo) };
}
