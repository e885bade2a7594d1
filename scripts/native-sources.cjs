/**
 * The one source list of the native addon, read by binding.gyp (through `node -p`) and by CMakeLists.txt (through
 * `node -e`). Paths are relative to the repository root.
 *
 * Shape (CommonJS so gyp and CMake can read it with plain `node`):
 *   core:      string[]  pure C++ core (no napi.h): sniff, probe, decode, orient, resize, encode, metadata strip.
 *                        Builds as a static library (CMake) or straight into the addon (gyp).
 *   cdeps:     string[]  the translation unit(s) that instantiate third-party header libraries (stb) with our
 *                        configuration; part of the core library.
 *   binding:   string[]  the thin Node-API layer (needs node-addon-api + NAPI_VERSION).
 *   coreIncludeDirs: string[]  include dirs the core needs besides the fetched deps (repo-relative).
 *   defines:   string[]  preprocessor definitions for core + cdeps + binding.
 *   bindingDefines: string[] extra definitions for the binding only.
 *   includeDirs(): string[]  absolute include dirs of the fetched C deps (runs scripts/fetch-cdeps.mjs, which fetches
 *                        on first use, honours PANTO_CDEPS_DIR).
 *   libs():    string[]  absolute paths of the static libraries to link, in link order (same fetch as above).
 *   cflags:    string[]  compile flags for core + cdeps + binding (C++17, -O3, hidden visibility).
 *   ldflags:   string[]  link flags of the addon.
 */
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const fetchCdeps = (flag) =>
  execFileSync(process.execPath, [path.join(root, 'scripts', 'fetch-cdeps.mjs'), flag], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();

module.exports = {
  core: [
    'native/core/budget.cpp',
    'native/core/cost.cpp',
    'native/core/media-type.cpp',
    'native/core/probe.cpp',
    'native/core/metadata-strip.cpp',
    'native/core/pixels.cpp',
    'native/core/decode.cpp',
    'native/core/jpeg-half.cpp',
    'native/core/encode.cpp',
    'native/core/png-encode.cpp',
    'native/core/pdf.cpp',
    'native/core/process.cpp',
  ],
  cdeps: ['cdeps/stb-impl.cpp'],
  binding: ['native/binding/addon.cpp'],
  coreIncludeDirs: ['native/core'],
  defines: [],
  bindingDefines: ['NAPI_VERSION=8', 'NAPI_CPP_EXCEPTIONS', 'NODE_ADDON_API_DISABLE_DEPRECATED'],
  includeDirs: () => [fetchCdeps('--print-include')],
  libs: () => fetchCdeps('--print-libs').split(' '),
  cflags: ['-std=c++17', '-O3', '-fexceptions', '-fvisibility=hidden', '-fvisibility-inlines-hidden'],
  ldflags: ['-Wl,--exclude-libs,ALL', '-lpthread', '-lm'],
};
