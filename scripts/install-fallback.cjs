#!/usr/bin/env node
/**
 * npm `install` step, after `node-gyp-build` failed (no prebuild for this platform and no working source build, e.g.
 * no C++ compiler): when the package carries the WebAssembly build of the media core (prebuilds/wasm32/), the
 * install succeeds and the media API runs on it (src/media/native-addon.ts selects it at run time with a one-line
 * notice); otherwise it fails as before, so npm shows node-gyp's error.
 * Exit code: 0 when the wasm build is present, 1 otherwise.
 */
const { existsSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const files = [
  path.join(root, 'prebuilds', 'wasm32', 'panto-media.wasm'),
  path.join(root, 'prebuilds', 'wasm32', 'panto-media.cjs'),
  path.join(root, 'native', 'wasm', 'wasm-core.cjs'),
  path.join(root, 'native', 'wasm', 'wasm-worker.cjs'),
];
if (files.every((f) => existsSync(f))) {
  process.stderr.write(
    `libpanto: no native media addon could be installed for ${process.platform}-${process.arch}; ` +
      'images and PDFs will be processed by the bundled WebAssembly build (same results, slower).\n',
  );
  process.exit(0);
}
process.stderr.write(
  'libpanto: no native media addon could be installed, and no WebAssembly build is bundled.\n',
);
process.exit(1);
